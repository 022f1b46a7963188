// The registry's sign-in methods and password-style sign-in through the auth methods (docs/identity.md),
// through the HTTP API of one started server: the admin settings' 422 rules, sign-in through a password
// method with provisioning, linking, the collision refusal, and one throttle failure per sign-in.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  Client as AuthClient,
  fastEnv,
  login as authLogin,
  minimalOidcAttrs,
} from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";
import { WebClient } from "../console/helpers.ts";

const SIGN_IN = "/api/v2/admin/sign-in-methods";

Deno.test("registry sign-in through the auth methods", async (t) => {
  const srv = await startTestServer({
    ...fastEnv,
    WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    WHARF_REGISTRY_LOGIN_FAILURES: "3",
  });
  try {
    const api = new Client(srv.url);
    const admin = await api.login("admin", ADMIN_PASSWORD);
    const anon = new AuthClient(srv.url);
    const listed = await anon.get("/v1/auth-methods?scope_id=global");
    const primary: string = listed.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id;
    const authAdmin = new AuthClient(
      srv.url,
      await authLogin(anon, primary, "admin", fastEnv.WHARF_INITIAL_ADMIN_PASSWORD!),
    );

    await t.step("sign-in methods: default, 422 rules, admins only", async () => {
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry"] });
      const oidc = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "oidc",
        name: "Corp SSO",
        attributes: minimalOidcAttrs,
      });
      assertEquals(oidc.status, 200, JSON.stringify(oidc.body));
      const refused: [unknown, string][] = [
        [{}, "Methods can't be blank"],
        [{ methods: "registry" }, "Methods must be a list of sign-in method ids"],
        [{ methods: [] }, "Methods must name at least one sign-in method"],
        [{ methods: ["registry", 7] }, "Each sign-in method must be an auth-method id or registry"],
        [{ methods: ["registry", "amldap_nothere"] }, "Sign-in method 'amldap_nothere' does not exist"],
        [{ methods: ["registry", primary, "registry"] }, "Sign-in methods must not repeat: registry"],
        [
          { methods: ["registry", oidc.body.id] },
          `Sign-in method '${oidc.body.id}' is an OIDC method in state inactive; make it active-public or active-private`,
        ],
        [
          { methods: [primary] },
          "No registry administrator could sign in through these methods; keep registry or add a method of a linked admin",
        ],
      ];
      for (const [body, message] of refused) {
        const r = await api.put(SIGN_IN, body, { token: admin });
        assertEquals([r.status, r.body], [422, { errors: [message], success: false }], JSON.stringify(body));
      }
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry"] });
      assertEquals((await api.get(SIGN_IN)).status, 401);
      const put = await api.put(SIGN_IN, { methods: ["registry", primary] }, { token: admin });
      assertEquals([put.status, put.body], [200, { methods: ["registry", primary] }]);
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry", primary] });
      const user = await api.post("/api/v1/admin/users", {
        user: { username: "plain", email: "plain@example.com", password: "plain-password-1" },
      }, { token: admin });
      assertEquals(user.status, 200, user.text);
      const plain = await api.login("plain", "plain-password-1");
      assertEquals((await api.get(SIGN_IN, { token: plain })).status, 403);
      assertEquals((await api.put(SIGN_IN, { methods: ["registry"] }, { token: plain })).status, 403);
    });

    await t.step("sign-in methods on the console's admin page, through the same service", async () => {
      const web = new WebClient(srv.url);
      assertEquals((await web.signIn("admin", ADMIN_PASSWORD)).status, 303);
      const page = await web.get("/ui/admin");
      assert(
        page.text.includes(
          `<code>${primary}</code> (Generated global scope initial password auth method, password)`,
        ),
      );
      const bad = await web.postForm("/ui/admin/sign-in-methods", { methods: `${primary}` });
      assertEquals(bad.status, 303);
      assert((await web.get("/ui/admin")).text.includes("No registry administrator could sign in"));
      assertEquals((await web.postForm("/ui/admin/sign-in-methods", { methods: `registry` })).status, 303);
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry"] });
      assertEquals(
        (await web.postForm("/ui/admin/sign-in-methods", { methods: `registry, ${primary}` })).status,
        303,
      );
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry", primary] });
    });
  } finally {
    await srv.stop();
  }
});
