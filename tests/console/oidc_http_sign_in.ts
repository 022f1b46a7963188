// A server offering "Sign in with Corp SSO" against a real OpenID provider (oidc-provider), and the console's
// OIDC sign-in as a browser follows it over HTTP, for the HTTP tests of docs/identity.md#oidc-sign-in.

import { assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { type OidcProviderFixture, type OidcTestUser, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { fastEnv } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD } from "../registry/helpers.ts";
import { offerOidcSignIn, type OidcSignInSetup } from "../registry/oidc_sign_in_setup.ts";
import { type PageAnswer, WebClient } from "./helpers.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";

export interface ConsoleOidc extends OidcSignInSetup {
  srv: TestServer;
  op: OidcProviderFixture;
  /**
   * "Sign in with Corp SSO" in a new browser, through the provider, to the answer of the console's completion
   * page (303 to / once signed in, to the code step with two-factor on, or a refusal). `beforeCompletion` runs
   * after the provider's callback, before the browser reaches the completion page.
   */
  signIn(
    user: OidcTestUser,
    beforeCompletion?: () => Promise<void>,
  ): Promise<{ web: WebClient; answer: PageAnswer }>;
  /** The username the browser's start page says it is signed in as, if any. */
  signedInAs(web: WebClient): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** A started server and provider with "Corp SSO" offered for sign-in (claims scopes email and profile). */
export async function startConsoleOidc(): Promise<ConsoleOidc> {
  const srv = await startTestServer({ ...fastEnv, WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  const op = await startOidcProvider({ redirectUris: [`${srv.url}${callbackPath}`], idTokenClaims: true });
  const stop = async () => {
    await op.stop();
    await srv.stop();
  };
  let setup: OidcSignInSetup;
  try {
    setup = await offerOidcSignIn(srv.url, op, ["email", "profile"]);
  } catch (err) {
    await stop();
    throw err;
  }
  const signIn = async (user: OidcTestUser, beforeCompletion?: () => Promise<void>) => {
    const web = new WebClient(srv.url);
    const start = await web.get(`/ui/login/oidc/${setup.oidc}`);
    assertEquals(start.status, 303, start.text);
    const { callbackUrl } = await completeProviderLogin(start.headers.get("location")!, user);
    let answer = await web.get(callbackUrl.pathname + callbackUrl.search);
    await beforeCompletion?.();
    for (let hop = 0; hop < 5 && answer.status === 302; hop++) {
      const location = new URL(answer.headers.get("location")!, srv.url);
      answer = await web.get(location.pathname + location.search);
    }
    return { web, answer };
  };
  const signedInAs = async (web: WebClient) =>
    /Signed in as ([a-z0-9_-]+)\./.exec((await web.get("/")).text)?.[1];
  return { ...setup, srv, op, signIn, signedInAs, stop };
}
