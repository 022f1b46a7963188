// `vagrant cloud auth login` (Debian's 2.3.4 and 2.4.9) through an LDAP sign-in method against a real slapd
// (docs/identity.md#a-worked-ldap-example): the directory's password signs in, the registry user is
// provisioned with the directory's e-mail, and members of cn=box-publishers publish in acme because that
// managed group is bound to acme's member role; taken out of the group, the next sign-in no longer grants it,
// and a user outside the group never could.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  groupResolvingLdapAttributes,
  groupsDn,
  peopleDn,
  slapdSkipReason,
  startSlapd,
  users,
} from "../fixtures/slapd.ts";
import { callApi, passwordLogin } from "../fixtures/wharf_auth.ts";
import { buildBoxFile, cmd, describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { ADMIN_PASSWORD, clientTestEnv, RegistryApi } from "./registry_api.ts";
import { sandbox24, vagrant24Missing } from "./vagrant24.ts";

const AUTH_ADMIN_PASSWORD = "auth-admin-password-1";
const skip = explainSkip(
  "vagrant sign-in through LDAP",
  slapdSkipReason ?? (await vagrantMissing()) ?? (await vagrant24Missing()),
);
const passwordPrompt = /Password \(will be hidden\):/;
const descriptionPrompt = /Token description \(Defaults to/;
const dave = { uid: "dave", dn: `uid=dave,${peopleDn}`, password: "dave-password", mail: "dave@example.org" };
const publishersDn = `cn=box-publishers,${groupsDn}`;

Deno.test({
  name:
    "vagrant 2.3 and 2.4 sign in through LDAP, are provisioned and publish in acme through a group binding",
  ignore: skip,
  async fn(t) {
    const ldap = await startSlapd();
    await ldap.change(
      `dn: ${dave.dn}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: dave\ncn: Dave Lister\nsn: Lister\n` +
        `mail: ${dave.mail}\nuserPassword: ${dave.password}\n\n` +
        `dn: ${publishersDn}\nchangetype: add\nobjectClass: groupOfNames\ncn: box-publishers\n` +
        `member: ${users.alice.dn}\nmember: ${users.bob.dn}\n`,
    );
    // The server's log at debug level: no directory password or token may be in any line.
    const logged = { logLines: [] as string[] };
    const { logLines } = logged;
    const fastHashing = { WHARF_ARGON2_TIME: "1", WHARF_ARGON2_MEMORY_KIB: "1024" };
    const env = { ...clientTestEnv, ...fastHashing, WHARF_INITIAL_ADMIN_PASSWORD: AUTH_ADMIN_PASSWORD };
    const server = await startTestServer(env, undefined, logged);
    const signedInTokens: string[] = [];
    const sandboxes: VagrantSandbox[] = [];
    const boxes = await Deno.makeTempDir({ prefix: "wharf-ldap-boxes-" });
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
          ...groupResolvingLdapAttributes(ldap),
          account_attribute_maps: ["mail=email", "cn=fullName"],
        },
      }, authAdmin);
      assertEquals(method.status, 200, JSON.stringify(method.body));
      const group = await callApi(server.url, "POST", "/v1/managed-groups", {
        auth_method_id: method.body.id,
        name: "box-publishers",
        attributes: { group_names: ["box-publishers"] },
      }, authAdmin);
      assertEquals(group.status, 200, JSON.stringify(group.body));
      await api.expectOk("PUT", "/api/v2/admin/sign-in-methods", {
        token: admin,
        body: { methods: ["registry", primary, method.body.id] },
      });
      await api.createOrganization(admin, "acme", []);
      const bound = await api.expectOk("POST", "/api/v2/organization/acme/group-bindings", {
        token: admin,
        body: { managed_group_id: group.body.id, role: "member" },
      });
      assertEquals(bound.group_bindings, [{ managed_group_id: group.body.id, role: "member" }]);

      const signIn = async (sandbox: VagrantSandbox, who: string, password: string) =>
        await sandbox.vagrantInTerminal(["cloud", "auth", "login", "-u", who], [
          { after: passwordPrompt, type: password },
          { after: descriptionPrompt, type: `${who} laptop` },
        ]);
      const publish = async (sandbox: VagrantSandbox, tag: string, version: string) =>
        await sandbox.vagrant(
          cmd(
            `cloud publish ${tag} ${version} virtualbox`,
            await buildBoxFile(boxes, `${tag.replace("/", "-")}-${version}`),
            "--release",
            "-f",
          ),
        );
      /** The token's user creating a box in acme: 403 with the registry's message. */
      const refusedInAcme = async (token: string | undefined, name: string) => {
        const direct = await api.call("POST", "/api/v1/boxes", {
          token,
          body: { box: { username: "acme", name } },
        });
        assertEquals([direct.status, direct.body], [403, {
          errors: ["You are not allowed to modify boxes in namespace 'acme'!"],
          success: false,
        }]);
      };
      const versions = {
        "2.3.4": () => VagrantSandbox.create(server.url),
        "2.4.9": () => sandbox24(server.url),
      };
      const bobs: VagrantSandbox[] = [];
      for (const [version, who] of [["2.3.4", "bob"], ["2.4.9", "alice"]] as const) {
        await t.step(
          `Vagrant ${version}: ${who} signs in, is provisioned and publishes in acme`,
          async () => {
            const sandbox = await versions[version]();
            sandboxes.push(sandbox);
            if (who === "bob") bobs.push(sandbox);
            const wrong = await signIn(sandbox, who, "not-the-password");
            assert(wrong.code !== 0, describeRun("vagrant cloud auth login (wrong)", wrong));
            assertStringIncludes(wrong.output, "Invalid login or password!");
            const login = await signIn(sandbox, who, users[who].password);
            assertEquals(login.code, 0, describeRun("vagrant cloud auth login", login));
            signedInTokens.push((await sandbox.storedLoginToken())!);
            assertStringIncludes(login.output, "You are now logged in.");
            const whoami = await sandbox.vagrant(["cloud", "auth", "whoami"]);
            assertStringIncludes(
              whoami.output,
              `Currently logged in as ${who}`,
              describeRun("whoami", whoami),
            );
            const user = await api.expectOk("GET", `/api/v1/admin/users/${who}`, { token: admin });
            assertEquals([user.username, user.email, user.admin], [who, users[who].mail, false]);
            const published = await publish(sandbox, `acme/${who}-box`, "1.0.0");
            assertEquals(published.code, 0, describeRun("vagrant cloud publish", published));
            assertStringIncludes(published.output, `Complete! Published acme/${who}-box`);
          },
        );
      }

      await t.step("dave, outside the group, signs in but cannot publish in acme", async () => {
        const sandbox = await VagrantSandbox.create(server.url);
        sandboxes.push(sandbox);
        const login = await signIn(sandbox, "dave", dave.password);
        assertEquals(login.code, 0, describeRun("vagrant cloud auth login (dave)", login));
        const published = await publish(sandbox, "acme/dave-box", "1.0.0");
        assert(published.code !== 0, describeRun("vagrant cloud publish (dave)", published));
        await refusedInAcme(await sandbox.storedLoginToken(), "dave-box");
      });

      await t.step("bob, taken out of cn=box-publishers, cannot publish after his next sign-in", async () => {
        await ldap.change(
          `dn: ${publishersDn}\nchangetype: modify\ndelete: member\nmember: ${users.bob.dn}\n`,
        );
        // A signed-in vagrant keeps its token: bob signs out and in again.
        const sandbox = bobs[0]!;
        const logout = await sandbox.vagrant(["cloud", "auth", "logout"]);
        assertEquals(logout.code, 0, describeRun("vagrant cloud auth logout", logout));
        const login = await signIn(sandbox, "bob", users.bob.password);
        assertEquals(login.code, 0, describeRun("vagrant cloud auth login (bob again)", login));
        const members = await callApi(
          server.url,
          "GET",
          `/v1/managed-groups/${group.body.id}`,
          undefined,
          authAdmin,
        );
        assertEquals((members.body.member_ids as string[]).length, 1, JSON.stringify(members.body));
        const published = await publish(sandbox, "acme/bob-box", "1.1.0");
        assert(published.code !== 0, describeRun("vagrant cloud publish (bob, out of the group)", published));
        const token = await sandbox.storedLoginToken();
        // A new box in acme: 403; his private acme/bob-box is no longer his to see (404).
        await refusedInAcme(token, "bob-box-2");
        assertEquals((await api.call("GET", "/api/v1/box/acme/bob-box", { token })).status, 404);
        signedInTokens.push(token!);
      });

      await t.step("no password or token in any log line of these sign-ins", () => {
        assert(logLines.some((l) => l.includes("/api/v1/authenticate")), logLines.slice(-5).join("\n"));
        const secrets = [
          users.alice.password,
          users.bob.password,
          dave.password,
          "not-the-password",
          AUTH_ADMIN_PASSWORD,
          ADMIN_PASSWORD,
          admin,
          authAdmin,
          ...signedInTokens,
        ];
        for (const secret of secrets) {
          assert(secret.length >= 8, secret);
          const leaked = logLines.find((l) => l.includes(secret));
          assert(leaked === undefined, `a log line holds a secret: ${leaked}`);
        }
      });
    } finally {
      for (const s of sandboxes) await s.remove();
      await Deno.remove(boxes, { recursive: true }).catch(() => {});
      await server.stop();
      await ldap.stop();
    }
  },
});
