// `vagrant cloud auth login` (Debian's 2.3.4 and 2.4.9) through an LDAP sign-in method against a real slapd
// (docs/identity.md#a-worked-ldap-example): the directory's password signs in, the registry user is
// provisioned with the directory's e-mail, a wrong password gets the registry's usual answer.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { peopleDn, slapdSkipReason, startSlapd, users } from "../fixtures/slapd.ts";
import { callApi, passwordLogin } from "../fixtures/wharf_auth.ts";
import { describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { ADMIN_PASSWORD, clientTestEnv, RegistryApi } from "./registry_api.ts";
import { sandbox24, vagrant24Missing } from "./vagrant24.ts";

const AUTH_ADMIN_PASSWORD = "auth-admin-password-1";
const skip = explainSkip(
  "vagrant sign-in through LDAP",
  slapdSkipReason ?? (await vagrantMissing()) ?? (await vagrant24Missing()),
);
const passwordPrompt = /Password \(will be hidden\):/;
const descriptionPrompt = /Token description \(Defaults to/;

Deno.test({
  name: "vagrant cloud auth login 2.3 and 2.4 sign in through an LDAP sign-in method and are provisioned",
  ignore: skip,
  async fn(t) {
    const ldap = await startSlapd();
    const server = await startTestServer({
      ...clientTestEnv,
      WHARF_INITIAL_ADMIN_PASSWORD: AUTH_ADMIN_PASSWORD,
      WHARF_ARGON2_TIME: "1",
      WHARF_ARGON2_MEMORY_KIB: "1024",
    });
    const sandboxes: VagrantSandbox[] = [];
    try {
      const api = new RegistryApi(server.url);
      const admin = await api.login("admin", ADMIN_PASSWORD);
      const listed = await callApi(server.url, "GET", "/v1/auth-methods?scope_id=global");
      const primary = (listed.body.items as { id: string; is_primary?: boolean }[]).find((m) =>
        m.is_primary
      )!.id;
      const authAdmin = await passwordLogin(server.url, primary, "admin", AUTH_ADMIN_PASSWORD);
      const method = await callApi(server.url, "POST", "/v1/auth-methods", {
        scope_id: "global",
        type: "ldap",
        name: "Corp directory",
        attributes: {
          state: "active-public",
          urls: [ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
          account_attribute_maps: ["mail=email", "cn=fullName"],
        },
      }, authAdmin);
      assertEquals(method.status, 200, JSON.stringify(method.body));
      await api.expectOk("PUT", "/api/v2/admin/sign-in-methods", {
        token: admin,
        body: { methods: ["registry", method.body.id] },
      });

      const signIn = async (sandbox: VagrantSandbox, who: "alice" | "bob", password: string) =>
        await sandbox.vagrantInTerminal(["cloud", "auth", "login", "-u", who], [
          { after: passwordPrompt, type: password },
          { after: descriptionPrompt, type: `${who} laptop` },
        ]);
      for (
        const [version, who, make] of [
          ["2.3.4", "bob", () => VagrantSandbox.create(server.url)],
          ["2.4.9", "alice", () => sandbox24(server.url)],
        ] as const
      ) {
        await t.step(
          `Vagrant ${version}: ${who}'s directory password signs in as provisioned ${who}`,
          async () => {
            const sandbox = await make();
            sandboxes.push(sandbox);
            const wrong = await signIn(sandbox, who, "not-the-password");
            assert(wrong.code !== 0, describeRun("vagrant cloud auth login (wrong)", wrong));
            assertStringIncludes(wrong.output, "Invalid login or password!");
            const login = await signIn(sandbox, who, users[who].password);
            assertEquals(login.code, 0, describeRun("vagrant cloud auth login", login));
            assertStringIncludes(login.output, "You are now logged in.");
            const whoami = await sandbox.vagrant(["cloud", "auth", "whoami"]);
            assertStringIncludes(
              whoami.output,
              `Currently logged in as ${who}`,
              describeRun("whoami", whoami),
            );
            const user = await api.expectOk("GET", `/api/v1/admin/users/${who}`, { token: admin });
            assertEquals([user.username, user.email, user.admin], [who, users[who].mail, false]);
            const link = await api.expectOk("GET", `/api/v2/admin/users/${who}/identity`, { token: admin });
            assert(
              String((link.identity as { user_id: string }).user_id).startsWith("u_"),
              JSON.stringify(link),
            );
          },
        );
      }
    } finally {
      for (const s of sandboxes) await s.remove();
      await server.stop();
      await ldap.stop();
    }
  },
});
