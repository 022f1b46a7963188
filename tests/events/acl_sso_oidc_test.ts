// OIDC login as `nomad login` drives it, against a real OpenID provider (npm oidc-provider): auth-url with an
// allowed redirect URI, the provider's login and consent, complete-auth → token bound by list claims; the
// refusals for a foreign redirect URI, a replayed nonce and a wrong state; pending logins bounded per address;
// a login pending across a restart completes after it; 1,000 pending at most, 30 started a minute per address
// (docs/events.md#sso-login).

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import {
  completeAuthBody,
  corpAuthUrl,
  createCorpOidcMethod,
  ssoRedirectUri as redirectUri,
} from "./sso_oidc_helpers.ts";
import { dataDirText } from "../helpers/files.ts";
import { call, putPolicy, rootSecret, startEventsServer } from "./stream_helpers.ts";

Deno.test("acl OIDC login: auth-url, provider login, complete-auth, bindings from list claims, refusals", async () => {
  const op = await startOidcProvider({ redirectUris: [redirectUri] });
  const srv = await startEventsServer();
  try {
    const put = (path: string, body: unknown, token?: string) => call(srv.url, "PUT", path, { body, token });
    const method = await createCorpOidcMethod(srv.url, op, {
      fields: { TokenNameFormat: "${auth_method_name}-${value.email}" },
      config: {
        OIDCScopes: ["email", "groups"],
        ClaimMappings: { email: "email" },
        ListClaimMappings: { groups: "groups" },
      },
    });
    assert(!method.includes(op.clientSecret));
    await putPolicy(srv.url, "admins", 'node { policy = "write" }');
    await putPolicy(srv.url, "developers", 'node { policy = "read" }');
    for (const [name, selector] of [["admins", '"admins" in list.groups'], ["developers", ""]]) {
      const r = await put("/v1/acl/binding-rule", {
        AuthMethod: "corp",
        BindType: "policy",
        BindName: name,
        Selector: selector,
      }, rootSecret);
      assertEquals(r.status, 200, r.text);
    }

    const authUrl = async (nonce: string, redirect = redirectUri) =>
      await put("/v1/acl/oidc/auth-url", {
        AuthMethodName: "corp",
        RedirectURI: redirect,
        ClientNonce: nonce,
      });
    const foreign = await authUrl("n-0", "http://evil.example/cb");
    assertEquals([foreign.status, foreign.text], [
      400,
      "failed to generate auth URL: unauthorized redirect_uri: http://evil.example/cb",
    ]);

    const longNonce = await authUrl("n".repeat(257));
    assertEquals([longNonce.status, longNonce.text], [
      400,
      "error storing OIDC request: client nonce longer than 256 characters",
    ]);

    const login = async (user: typeof oidcUsers.alice, nonce: string) => {
      const url = await corpAuthUrl(srv.url, nonce);
      assertEquals(url.origin, op.issuer);
      assertEquals(url.searchParams.get("code_challenge_method"), "S256");
      assertEquals(url.searchParams.get("nonce"), nonce);
      return await completeAuthBody(url, nonce, user);
    };

    // Alice is in "admins": both rules bind; the name comes from her email claim.
    const alice = await login(oidcUsers.alice, "nonce-alice-0123456789");
    const done = await put("/v1/acl/oidc/complete-auth", alice);
    assertEquals(done.status, 200, done.text);
    const t = done.json as Record<string, unknown>;
    assertEquals([t.Type, t.Policies, t.Name, t.ExpirationTTL], [
      "client",
      ["admins", "developers"],
      "corp-alice@example.org",
      "1h0m0s",
    ]);
    const self = await call(srv.url, "GET", "/v1/acl/token/self", { token: String(t.SecretID) });
    assertEquals(self.status, 200);
    // The same callback again: the pending request was used up.
    const replay = await put("/v1/acl/oidc/complete-auth", alice);
    assertEquals([replay.status, replay.text], [400, "no OIDC request found for client nonce"]);

    // Bob is not an admin: only the catch-all rule binds.
    const bob = await login(oidcUsers.bob, "nonce-bob-0123456789");
    const wrongState = await put("/v1/acl/oidc/complete-auth", { ...bob, State: "forged" });
    assertEquals([wrongState.status, wrongState.text], [
      400,
      "failed to exchange token with provider: state parameter does not match",
    ]);
    const bob2 = await login(oidcUsers.bob, "nonce-bob-abcdefghij");
    const bobDone = await put("/v1/acl/oidc/complete-auth", bob2);
    assertEquals([bobDone.status, (bobDone.json as Record<string, unknown>).Policies], [200, ["developers"]]);

    // Pending logins are bounded per client address: the 21st open one is refused until some complete or expire.
    for (let i = 0; i < 20; i++) assertEquals((await authUrl(`flood-${i}-0123456789`)).status, 200);
    const flood = await authUrl("flood-20-0123456789");
    assertEquals([flood.status, flood.text], [
      429,
      "error storing OIDC request: too many requests from this address",
    ]);
    assertEquals((await authUrl("flood-3-0123456789")).status, 200); // its own pending request, again

    const missing = await put("/v1/acl/oidc/complete-auth", { AuthMethodName: "corp" });
    assertEquals(
      missing.text,
      "invalid OIDC complete-auth request: 4 errors occurred:\n\t* missing client nonce\n\t* missing state\n" +
        "\t* missing code\n\t* missing redirect URI\n\n",
    );
  } finally {
    await srv.stop();
    await op.stop();
  }
});

Deno.test("acl OIDC login: pending across a restart, at most 1,000 held, nonce and state not on disk", async () => {
  const op = await startOidcProvider({ redirectUris: [redirectUri] });
  // Client addresses from X-Forwarded-For, so 1,000 pending logins come from 1,000 addresses.
  let srv = await startEventsServer({ WHARF_TRUST_PROXY: "1" });
  try {
    const put = (path: string, body: unknown, token?: string) => call(srv.url, "PUT", path, { body, token });
    await createCorpOidcMethod(srv.url, op);
    const rule = await put(
      "/v1/acl/binding-rule",
      { AuthMethod: "corp", BindType: "management" },
      rootSecret,
    );
    assertEquals(rule.status, 200, rule.text);

    const nonce = "nonce-restart-0123456789";
    const authUrl = await corpAuthUrl(srv.url, nonce);
    const state = authUrl.searchParams.get("state")!;
    /** auth-url for a new nonce from address 10.9.x.y (i: 0–65535). */
    const another = (i: number) =>
      call(srv.url, "PUT", "/v1/acl/oidc/auth-url", {
        headers: { "X-Forwarded-For": `10.9.${i >> 8}.${i & 255}` },
        body: { AuthMethodName: "corp", RedirectURI: redirectUri, ClientNonce: `nonce-fill-${i}` },
      });
    // Each new pending login is a commit: one address starts 30 a minute (WHARF_OIDC_STARTS_PER_MINUTE), even
    // when it uses each up at once (a forged state still consumes it), then waits for the bucket.
    const started: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await call(srv.url, "PUT", "/v1/acl/oidc/auth-url", {
        headers: { "X-Forwarded-For": "10.8.0.1" },
        body: { AuthMethodName: "corp", RedirectURI: redirectUri, ClientNonce: `nonce-churn-${i}` },
      });
      started.push(r.status);
      if (r.status !== 200) {
        assertEquals([r.text, r.headers.get("retry-after")], [
          "error storing OIDC request: too many requests from this address",
          "2",
        ]);
        break;
      }
      const forged = await put("/v1/acl/oidc/complete-auth", {
        AuthMethodName: "corp",
        ClientNonce: `nonce-churn-${i}`,
        State: "forged",
        Code: "forged",
        Iss: op.issuer,
        RedirectURI: redirectUri,
      });
      assertEquals(forged.status, 400, forged.text);
    }
    assertEquals([started.length, started.at(-1)], [31, 429]);

    for (let i = 1; i < 1000; i++) assertEquals((await another(i)).status, 200);
    const full = [503, "error storing OIDC request: too many requests"];
    const over = await another(1000);
    assertEquals([over.status, over.text], full);
    srv = await srv.restart();
    const overAfterRestart = await another(1001);
    assertEquals([overAfterRestart.status, overAfterRestart.text], full);
    const onDisk = await dataDirText(srv.dataDir);
    assert(!onDisk.includes(nonce) && !onDisk.includes(state), "a pending login's nonce or state on disk");

    const body = await completeAuthBody(authUrl, nonce, oidcUsers.alice);
    const done = await put("/v1/acl/oidc/complete-auth", body);
    assertEquals(done.status, 200, done.text);
    assertEquals((await another(1002)).status, 200); // the completed login's room
    srv = await srv.restart();
    const replay = await put("/v1/acl/oidc/complete-auth", body);
    assertEquals([replay.status, replay.text], [400, "no OIDC request found for client nonce"]);
  } finally {
    await srv.stop();
    await op.stop();
  }
});
