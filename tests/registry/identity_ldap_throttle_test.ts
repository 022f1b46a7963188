// The registry's login throttle over an LDAP sign-in method against a real slapd (docs/security.md#throttles):
// every spelling the directory takes for one entry (here full-width letters, which slapd matches as ASCII)
// counts against that person's one key, so a locked name is not unlocked by spelling it differently.

import { assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { peopleDn, slapdSkipReason, startSlapd, users } from "../fixtures/slapd.ts";
import { fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";

Deno.test({
  name: "registry sign-in: LDAP spellings of one name share the login throttle's count",
  ignore: slapdSkipReason !== undefined,
  async fn() {
    const ldap = await startSlapd();
    const srv = await startTestServer({
      ...fastEnv,
      WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      WHARF_REGISTRY_LOGIN_FAILURES: "3",
    });
    try {
      const api = new Client(srv.url);
      const admin = await api.login("admin", ADMIN_PASSWORD);
      const { admin: authAdmin } = await signInAdmin(srv.url);
      const method = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "ldap",
        name: "directory",
        attributes: {
          state: "active-public",
          urls: [ldap.ldapUrl],
          discover_dn: true,
          user_dn: peopleDn,
          user_attr: "uid",
        },
      });
      assertEquals(method.status, 200, JSON.stringify(method.body));
      const put = await api.put("/api/v2/admin/sign-in-methods", { methods: ["registry", method.body.id] }, {
        token: admin,
      });
      assertEquals(put.status, 200, put.text);
      const signIn = (login: string, password: string) =>
        api.post("/api/v1/authenticate", { user: { login, password } });
      const fullWidth = "\uFF41\uFF4C\uFF49\uFF43\uFF45"; // ａｌｉｃｅ: the directory's alice
      const mixed = "\uFF41lice";

      // The directory takes each spelling for alice (and a first sign-in provisions her).
      for (const name of ["alice", fullWidth, mixed]) {
        assertEquals((await signIn(name, users.alice.password)).status, 200, name);
      }
      // Three wrong passwords lock alice (WHARF_REGISTRY_LOGIN_FAILURES=3), whatever the spelling.
      for (const name of ["alice", fullWidth, mixed]) {
        assertEquals((await signIn(name, "wrong-password")).status, 401, name);
      }
      for (const name of ["alice", fullWidth, mixed, "ALICE"]) {
        const locked = await signIn(name, users.alice.password);
        assertEquals(locked.status, 429, `${name}: ${locked.text}`);
      }
    } finally {
      await srv.stop();
      await ldap.stop();
    }
  },
});
