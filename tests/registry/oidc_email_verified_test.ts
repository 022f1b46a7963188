// A first OIDC sign-in (the console's flow, driven over HTTP without a browser) provisions the registry user
// with the account's e-mail only when the claims do not say `email_verified: false` (docs/identity.md#provisioning).

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { type OidcTestUser, oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { fastEnv } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD } from "./helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { offerOidcSignIn } from "./oidc_sign_in_setup.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";

Deno.test("first OIDC sign-in takes the e-mail unless the provider says it is unverified", async (t) => {
  const srv = await startTestServer({ ...fastEnv, WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  // alice's provider says email_verified false; bob's says nothing about it.
  const op = await startOidcProvider({
    redirectUris: [`${srv.url}${callbackPath}`],
    idTokenClaims: true,
    emailVerified: { [oidcUsers.alice.sub]: false, [oidcUsers.bob.sub]: undefined },
  });
  try {
    const { api, admin, oidc } = await offerOidcSignIn(srv.url, op, ["email", "profile"]);

    /** The console's "Sign in with Corp SSO" as a browser would follow it; ends signed in (303 to /). */
    const signIn = async (user: OidcTestUser) => {
      const web = new WebClient(srv.url);
      const start = await web.request("GET", `/ui/login/oidc/${oidc}`);
      assertEquals(start.status, 303, start.text);
      const { callbackUrl } = await completeProviderLogin(start.headers.get("location")!, user);
      let answer = await web.request("GET", callbackUrl.pathname + callbackUrl.search);
      for (let hop = 0; hop < 5 && answer.status >= 300 && answer.status < 400; hop++) {
        const location = new URL(answer.headers.get("location")!, srv.url);
        if (location.pathname === "/") break;
        answer = await web.request("GET", location.pathname + location.search);
      }
      assertEquals([answer.status, answer.headers.get("location")], [303, "/"], answer.text);
    };

    await t.step("email_verified false: provisioned as alice without an e-mail", async () => {
      await signIn(oidcUsers.alice);
      const user = await api.get("/api/v1/admin/users/alice", { token: admin });
      assertEquals(user.status, 200, user.text);
      assertEquals(user.body.email ?? null, null, user.text);
      // The address stays free for the person who owns it.
      const owner = await api.post("/api/v1/admin/users", {
        username: "alice-real",
        email: oidcUsers.alice.email,
        password: "alice-real-password-1",
      }, { token: admin });
      assert(owner.status < 300, `${owner.status} ${owner.text}`);
    });

    await t.step("email_verified absent: provisioned as bob with his e-mail", async () => {
      await signIn(oidcUsers.bob);
      const user = await api.get("/api/v1/admin/users/bob", { token: admin });
      assertEquals(user.body.email, oidcUsers.bob.email, user.text);
    });
  } finally {
    await op.stop();
    await srv.stop();
  }
});
