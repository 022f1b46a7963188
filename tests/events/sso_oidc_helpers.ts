// Steps shared by the Nomad OIDC login tests (docs/events.md#sso-login): an OIDC auth method "corp" on the test
// provider, the provider's login after auth-url giving the complete-auth body, and a token no key verifies.

import { assertEquals } from "../helpers/assert.ts";
import type { OidcProviderFixture, OidcTestUser } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { call, rootSecret } from "./stream_helpers.ts";

export const ssoRedirectUri = "http://localhost:4649/oidc/callback";

/** A JWS wharf can parse (RS256, kid k1, audience "wharf") whose signature is never checked: its keys never arrive. */
export function unverifiableToken(): string {
  const part = (o: unknown) =>
    btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: "RS256", kid: "k1" })}.${
    part({ iss: "x", aud: "wharf", iat: now, exp: now + 60 })
  }.AAAA`;
}

/** Creates OIDC method "corp" on `url` (TokenLocality local, MaxTokenTTL 1h; `extra` over those): the answer. */
export async function createCorpOidcMethod(
  url: string,
  op: OidcProviderFixture,
  extra: { fields?: Record<string, unknown>; config?: Record<string, unknown> } = {},
): Promise<string> {
  const r = await call(url, "PUT", "/v1/acl/auth-method", {
    token: rootSecret,
    body: {
      Name: "corp",
      Type: "OIDC",
      TokenLocality: "local",
      MaxTokenTTL: "1h",
      ...extra.fields,
      Config: {
        OIDCDiscoveryURL: op.issuer,
        OIDCClientID: op.clientId,
        OIDCClientSecret: op.clientSecret,
        AllowedRedirectURIs: [ssoRedirectUri],
        ...extra.config,
      },
    },
  });
  assertEquals(r.status, 200, r.text);
  return r.text;
}

/** The auth URL `url` answers for `nonce` (asserting a 200). */
export async function corpAuthUrl(url: string, nonce: string): Promise<URL> {
  const r = await call(url, "PUT", "/v1/acl/oidc/auth-url", {
    body: { AuthMethodName: "corp", RedirectURI: ssoRedirectUri, ClientNonce: nonce },
  });
  assertEquals(r.status, 200, r.text);
  return new URL(String((r.json as Record<string, unknown>).AuthURL));
}

/** `user` logs in at the provider through `authUrl`: the complete-auth body for `nonce`. */
export async function completeAuthBody(
  authUrl: URL,
  nonce: string,
  user: OidcTestUser,
): Promise<Record<string, string>> {
  const cb = (await completeProviderLogin(authUrl.toString(), { login: user.login, password: user.password }))
    .callbackUrl;
  return {
    AuthMethodName: "corp",
    ClientNonce: nonce,
    State: cb.searchParams.get("state") ?? "",
    Code: cb.searchParams.get("code") ?? "",
    Iss: cb.searchParams.get("iss") ?? "",
    RedirectURI: ssoRedirectUri,
  };
}
