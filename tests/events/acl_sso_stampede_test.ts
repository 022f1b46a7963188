// Nomad SSO logins flooding a provider that accepts connections and never answers: 200 unauthenticated
// auth-url, complete-auth and JWT logins at once from one address each. The provider is asked once per method
// (one fetch shared by every login), its failure logged once, and the per-address budgets apply before it is
// asked (docs/security.md#sso-login).

import { assert, assertEquals } from "../helpers/assert.ts";
import { startStalledProvider } from "../fixtures/stalled_provider.ts";
import { startTestServer } from "../helpers/server.ts";
import { call, rootSecret } from "./stream_helpers.ts";
import { ssoRedirectUri as redirectUri, unverifiableToken } from "./sso_oidc_helpers.ts";
import { tally } from "../helpers/statuses.ts";

const burst = 200;
/** The provider timeout is 10 s: an answer within this was not kept waiting for the provider. */
const promptMs = 3_000;

type Answer = { status: number; headers: Headers; text: string; ms: number };

/** `n` requests at once from `address` (X-Forwarded-For), the i-th body from `body(i)`. */
function flood(url: string, path: string, address: string, body: (i: number) => unknown): Promise<Answer[]> {
  return Promise.all(Array.from({ length: burst }, async (_, i) => {
    const started = performance.now();
    const r = await call(url, "PUT", path, { headers: { "X-Forwarded-For": address }, body: body(i) });
    return { ...r, ms: performance.now() - started };
  }));
}

Deno.test("Nomad SSO: 200 logins at once against a hanging provider make one provider fetch per method", async () => {
  // /hang never answers; /slow answers its discovery document after 500 ms, its JWKS never.
  const provider = startStalledProvider((path, origin) =>
    path === "/slow/.well-known/openid-configuration"
      ? {
        delayMs: 500,
        json: {
          issuer: `${origin}/slow`,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          jwks_uri: `${origin}/jwks-hang`,
        },
      }
      : undefined
  );
  const logLines: string[] = [];
  const srv = await startTestServer(
    { WHARF_ACL_BOOTSTRAP_SECRET: rootSecret, WHARF_TRUST_PROXY: "1" },
    undefined,
    { logLines },
  );
  const discoveryFailures = () =>
    logLines.filter((l) => l.includes("OIDC discovery failed") && l.includes('"auth_method":"hang"')).length;
  try {
    const methods = [
      {
        Name: "hang",
        Type: "OIDC",
        Config: {
          OIDCDiscoveryURL: `${provider.origin}/hang`,
          OIDCClientID: "wharf",
          OIDCClientSecret: "secret",
          AllowedRedirectURIs: [redirectUri],
        },
      },
      {
        Name: "jwt-slow",
        Type: "JWT",
        Config: { OIDCDiscoveryURL: `${provider.origin}/slow`, BoundAudiences: ["wharf"] },
      },
    ];
    for (const m of methods) {
      const r = await call(srv.url, "PUT", "/v1/acl/auth-method", {
        token: rootSecret,
        body: { TokenLocality: "local", MaxTokenTTL: "1h", ...m },
      });
      assertEquals(r.status, 200, r.text);
    }

    // 200 auth-url (distinct nonces) from one address and, at the same time, 200 JWT logins from another.
    const started = performance.now();
    const [starts, logins] = await Promise.all([
      flood(srv.url, "/v1/acl/oidc/auth-url", "10.1.0.1", (i) => ({
        AuthMethodName: "hang",
        RedirectURI: redirectUri,
        ClientNonce: `nonce-stampede-${i}`,
      })),
      flood(srv.url, "/v1/acl/login", "10.3.0.1", () => ({
        AuthMethodName: "jwt-slow",
        LoginToken: unverifiableToken(),
      })),
    ]);
    const elapsed = Math.round(performance.now() - started);

    // auth-url: the address's place and start are taken before the provider is asked. While the first 20 wait
    // for it they are its 20 pending logins, so the rest are refused at once, Nomad-shaped (text/plain, 429,
    // Retry-After), without reaching the provider; the 20 share one fetch and get its failure (502).
    assertEquals(tally(starts), { 429: burst - 20, 502: 20 }, `after ${elapsed} ms`);
    for (const r of starts.filter((a) => a.status === 429)) {
      assertEquals(r.text, "error storing OIDC request: too many requests from this address");
      assertEquals(r.headers.get("content-type")?.split(";")[0], "text/plain");
      assert(Number(r.headers.get("retry-after")) > 0);
      assert(r.ms < promptMs, `a refused auth-url took ${Math.round(r.ms)} ms`);
    }
    assertEquals(provider.count("/hang/.well-known/openid-configuration"), 1);
    assertEquals(discoveryFailures(), 1);

    // JWT logins of a method with a discovery URL: one discovery fetch, one JWKS fetch for all 200.
    assertEquals(tally(logins), { 401: burst });
    assertEquals(provider.count("/slow/.well-known/openid-configuration"), 1);
    assertEquals(provider.count("/jwks-hang"), 1);

    // complete-auth from a third address: its minute's budget (WHARF_OIDC_STARTS_PER_MINUTE, 30) is taken
    // before the provider is asked; the rest are refused at once. The 30 get the failure the provider gave
    // (answered again for 5 s; past that, one more shared fetch).
    const completions = await flood(srv.url, "/v1/acl/oidc/complete-auth", "10.2.0.1", (i) => ({
      AuthMethodName: "hang",
      ClientNonce: `nonce-forged-${i}`,
      State: "forged",
      Code: "forged",
      RedirectURI: redirectUri,
    }));
    assertEquals(tally(completions), { 429: burst - 30, 502: 30 });
    for (const r of completions.filter((a) => a.status === 429)) {
      assertEquals(r.text, "error completing OIDC login: too many requests from this address");
      assertEquals(r.headers.get("content-type")?.split(";")[0], "text/plain");
      assert(Number(r.headers.get("retry-after")) > 0);
      assert(r.ms < promptMs, `a refused complete-auth took ${Math.round(r.ms)} ms`);
    }
    assert(provider.count("/hang/.well-known/openid-configuration") <= 2, provider.paths.join(" "));
    assert(discoveryFailures() <= 2);
    // Every connection to the provider was one of those fetches (no other connection was opened).
    assertEquals(provider.connections, provider.paths.length);

    // Another address still starts a login (the refusals were per address), and waits only for the provider.
    const other = await call(srv.url, "PUT", "/v1/acl/oidc/auth-url", {
      headers: { "X-Forwarded-For": "10.4.0.1" },
      body: { AuthMethodName: "hang", RedirectURI: redirectUri, ClientNonce: "nonce-other" },
    });
    assertEquals(other.status, 502, other.text);
  } finally {
    await srv.stop();
    await provider.close();
  }
});
