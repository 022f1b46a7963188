// End to end: an OIDC auth method against a real OpenID provider — change-state with discovery validation,
// start → provider login + consent → callback → token, failures, expiry, single collection.

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import {
  type OidcProviderFixture,
  type OidcTestUser,
  oidcUsers,
  startOidcProvider,
  wharfMethodAttributes,
} from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { startStalledProvider } from "../fixtures/stalled_provider.ts";
import { opensslAvailable } from "../fixtures/tls_certs.ts";
import { type AuthServer, callApi, startAuthServer } from "../fixtures/wharf_auth.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";

async function createOidcMethod(
  api: AuthServer,
  op: OidcProviderFixture,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await api.call("POST", "/v1/auth-methods", {
    scope_id: "global",
    type: "oidc",
    name,
    attributes: { ...wharfMethodAttributes(op, api.url), claims_scopes: ["email", "profile"], ...extra },
  });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals((r.body.attributes as Record<string, unknown>).state, "inactive");
  return String(r.body.id);
}

async function changeState(api: AuthServer, id: string, attributes: Record<string, unknown>) {
  const current = await api.call("GET", `/v1/auth-methods/${id}`);
  return await api.call("POST", `/v1/auth-methods/${id}:change-state`, {
    version: current.body.version,
    attributes,
  });
}

async function activate(api: AuthServer, id: string): Promise<void> {
  const r = await changeState(api, id, { state: "active-public" });
  assertEquals(r.status, 200, JSON.stringify(r.body));
}

function authenticate(api: AuthServer, id: string, body: Record<string, unknown>) {
  return callApi(api.url, "POST", `/v1/auth-methods/${id}:authenticate`, body);
}

async function start(api: AuthServer, id: string, command = "start", extra: Record<string, unknown> = {}) {
  const r = await authenticate(api, id, { command, attributes: extra });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals(r.body.command, command);
  const attrs = r.body.attributes as Record<string, string>;
  assert(attrs.auth_url && attrs.token_id);
  return { authUrl: attrs.auth_url, tokenId: attrs.token_id };
}

function poll(api: AuthServer, id: string, tokenId: string) {
  return authenticate(api, id, { command: "token", attributes: { token_id: tokenId } });
}

/** Runs the provider's login and consent and returns wharf's callback URL the provider redirected to. */
async function providerLogin(
  authUrl: string,
  user: OidcTestUser = oidcUsers.alice,
  deny = false,
): Promise<URL> {
  const { callbackUrl } = await completeProviderLogin(authUrl, {
    login: user.login,
    password: user.password,
    deny,
  });
  assertEquals(callbackUrl.pathname, callbackPath);
  return callbackUrl;
}

Deno.test("OIDC login through the API against a real provider", async (t) => {
  const api = await startAuthServer();
  const op = await startOidcProvider({ redirectUris: [`${api.url}${callbackPath}`] });
  try {
    const id = await createOidcMethod(api, op, "corp-sso", { account_claim_maps: ["name=name"] });

    await t.step("start on an inactive method is 400 FailedPrecondition", async () => {
      const r = await authenticate(api, id, { command: "start" });
      assertEquals(r.status, 400);
      assertEquals(r.body.kind, "FailedPrecondition");
    });

    await t.step("change-state activates the method after discovery validation", async () => {
      await activate(api, id);
    });

    let firstAccountId = "";
    await t.step("start → provider login + consent → callback 302 → token once, then 403", async () => {
      const { authUrl, tokenId } = await start(api, id, "start", {
        roundtrip_payload: { back: "/dashboard" },
      });
      assertEquals(new URL(authUrl).origin, op.issuer);
      assertEquals((await poll(api, id, tokenId)).status, 202);

      const callbackUrl = await providerLogin(authUrl);
      const cb = await fetch(callbackUrl, { redirect: "manual" });
      await cb.body?.cancel();
      assertEquals(cb.status, 302);
      const final = new URL(cb.headers.get("location")!);
      assertEquals(final.origin + final.pathname, `${api.url}/authentication-complete`);
      assertEquals(JSON.parse(final.searchParams.get("roundtrip_payload")!), { back: "/dashboard" });

      const ready = await poll(api, id, tokenId);
      assertEquals(ready.status, 200, JSON.stringify(ready.body));
      const token = ready.body.attributes as Record<string, string>;
      assertMatch(token.token!, /^at_[0-9A-Za-z]{10}_s1/);
      const self = await callApi(api.url, "GET", `/v1/auth-tokens/${token.id}`, undefined, token.token);
      assertEquals(self.status, 200, JSON.stringify(self.body));

      const again = await poll(api, id, tokenId);
      assertEquals(again.status, 403);
      assertEquals(again.body.kind, "PermissionDenied");

      const acct = await api.call("GET", `/v1/accounts/${token.account_id}`);
      const attrs = acct.body.attributes as Record<string, unknown>;
      assertEquals(attrs.issuer, op.issuer);
      assertEquals(attrs.subject, oidcUsers.alice.sub);
      assertEquals(attrs.email, oidcUsers.alice.email);
      assertEquals(attrs.full_name, oidcUsers.alice.name);
      firstAccountId = token.account_id!;
    });

    await t.step("`login` works like `start`; the POST callback command equals the GET route", async () => {
      const { authUrl, tokenId } = await start(api, id, "login");
      const callbackUrl = await providerLogin(authUrl);
      const r = await authenticate(api, id, {
        command: "callback",
        attributes: {
          code: callbackUrl.searchParams.get("code"),
          state: callbackUrl.searchParams.get("state"),
        },
      });
      assertEquals(r.status, 302);
      assertEquals(r.body.command, "callback");
      const finalUrl = (r.body.attributes as Record<string, string>).final_redirect_url!;
      assertStringIncludes(finalUrl, "/authentication-complete");
      const ready = await poll(api, id, tokenId);
      assertEquals(ready.status, 200);
      // The same provider identity maps to the same account.
      assertEquals((ready.body.attributes as Record<string, string>).account_id, firstAccountId);
    });

    await t.step("a state can be used once: replaying the callback is 400", async () => {
      const { authUrl } = await start(api, id);
      const callbackUrl = await providerLogin(authUrl, oidcUsers.bob);
      const first = await fetch(callbackUrl, { redirect: "manual" });
      await first.body?.cancel();
      assertEquals(first.status, 302);
      const replay = await fetch(callbackUrl, { redirect: "manual" });
      const body = await replay.json();
      assertEquals(replay.status, 400);
      assertEquals(body.message, "Unknown or expired authentication attempt.");
    });

    await t.step("a denied consent redirects to /authentication-error and the poll says 401", async () => {
      const { authUrl, tokenId } = await start(api, id);
      const callbackUrl = await providerLogin(authUrl, oidcUsers.alice, true);
      assertEquals(callbackUrl.searchParams.get("error"), "access_denied");
      const cb = await fetch(callbackUrl, { redirect: "manual" });
      await cb.body?.cancel();
      assertEquals(cb.status, 302);
      const final = new URL(cb.headers.get("location")!);
      assertEquals(final.pathname, "/authentication-error");
      assert(final.searchParams.get("error"));
      const r = await poll(api, id, tokenId);
      assertEquals(r.status, 401);
      assertEquals((await poll(api, id, tokenId)).status, 403);
    });

    await t.step("an ID token with another nonce fails validation: error page, poll 401", async () => {
      const { authUrl, tokenId } = await start(api, id);
      // A tampered authorization request: the provider signs whatever nonce it was given.
      const tampered = new URL(authUrl);
      tampered.searchParams.set("nonce", "attacker-chosen-nonce");
      const callbackUrl = await providerLogin(tampered.toString());
      assert(callbackUrl.searchParams.get("code"));
      const cb = await fetch(callbackUrl, { redirect: "manual" });
      await cb.body?.cancel();
      assertEquals(cb.status, 302);
      const final = new URL(cb.headers.get("location")!);
      assertEquals(final.pathname, "/authentication-error");
      assertEquals((await poll(api, id, tokenId)).status, 401);
    });

    await t.step("unknown token ids are 403", async () => {
      assertEquals((await poll(api, id, "nonexistent-token-id")).status, 403);
    });
  } finally {
    await op.stop();
    await api.stop();
  }
});

Deno.test("OIDC change-state reports discovery validation failures from a real provider", async (t) => {
  const api = await startAuthServer();
  const op = await startOidcProvider({ redirectUris: [`${api.url}${callbackPath}`] });
  try {
    await t.step("a signing algorithm the provider does not support is 400", async () => {
      const id = await createOidcMethod(api, op, "bad-alg", { signing_algorithms: ["ES512"] });
      const r = await changeState(api, id, { state: "active-public" });
      assertEquals(r.status, 400, JSON.stringify(r.body));
      assertMatch(String(r.body.message), /^Unable to change auth method state: .*ES512/);
      const after = await api.call("GET", `/v1/auth-methods/${id}`);
      assertEquals((after.body.attributes as Record<string, unknown>).state, "inactive");
    });

    await t.step("a provider claiming another issuer is 400; the disable flag skips the check", async () => {
      const id = await createOidcMethod(api, op, "wrong-issuer");
      op.advertiseIssuer("https://impostor.example.com");
      try {
        const r = await changeState(api, id, { state: "active-private" });
        assertEquals(r.status, 400, JSON.stringify(r.body));
        assertMatch(String(r.body.message), /^Unable to change auth method state: .*issuer/);
        const forced = await changeState(api, id, {
          state: "active-private",
          disable_discovered_config_validation: true,
        });
        assertEquals(forced.status, 200, JSON.stringify(forced.body));
        // start runs discovery too: with the provider still lying it is a 500 naming the failure.
        const startR = await authenticate(api, id, { command: "start" });
        assertEquals(startR.status, 500);
        assertMatch(String(startR.body.message), /^Error generating parameters for starting the OIDC flow/);
      } finally {
        op.advertiseIssuer(undefined);
      }
    });

    await t.step("an endless discovery answer is cut at 256 KiB: 400 within seconds", async () => {
      // 16 KiB every 10 ms, never ending (before: read until the 10 s provider timeout, without a cap).
      const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
      const endless = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, () =>
        new Response(
          new ReadableStream({
            async pull(c) {
              await new Promise((r) => setTimeout(r, 10));
              c.enqueue(chunk);
            },
          }),
          { headers: { "content-type": "application/json" } },
        ));
      try {
        const id = await createOidcMethod(api, op, "endless", {
          issuer: `http://127.0.0.1:${endless.addr.port}`,
        });
        const started = performance.now();
        const r = await changeState(api, id, { state: "active-public" });
        const ms = performance.now() - started;
        assertEquals(r.status, 400, JSON.stringify(r.body));
        assertStringIncludes(String(r.body.message), "answered more than 262144 bytes");
        assert(ms < 4_000, `change-state took ${Math.round(ms)} ms`);
      } finally {
        await endless.shutdown();
      }
    });

    await t.step(
      "a discovery answering 302 is not followed: change-state 400, start 500, target never asked",
      async () => {
        const targetHits: string[] = [];
        const target = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (req) => {
          targetHits.push(new URL(req.url).pathname);
          return Response.json({});
        });
        const redirecting = Deno.serve(
          { port: 0, hostname: "127.0.0.1", onListen: () => {} },
          (req) => Response.redirect(`http://127.0.0.1:${target.addr.port}${new URL(req.url).pathname}`, 302),
        );
        try {
          const id = await createOidcMethod(api, op, "redirected", {
            issuer: `http://127.0.0.1:${redirecting.addr.port}`,
          });
          const notFollowed = "answered a redirect (HTTP 302), which is not followed";
          const r = await changeState(api, id, { state: "active-public" });
          assertEquals(r.status, 400, JSON.stringify(r.body));
          assertMatch(String(r.body.message), /^Unable to change auth method state: discovery failed: /);
          assertStringIncludes(String(r.body.message), notFollowed);
          // Activated without validation, `start` asks discovery itself: 500 naming the redirect.
          const forced = await changeState(api, id, {
            state: "active-public",
            disable_discovered_config_validation: true,
          });
          assertEquals(forced.status, 200, JSON.stringify(forced.body));
          const startR = await authenticate(api, id, { command: "start" });
          assertEquals(startR.status, 500, JSON.stringify(startR.body));
          assertMatch(
            String(startR.body.message),
            /^Error generating parameters for starting the OIDC flow: /,
          );
          assertStringIncludes(String(startR.body.message), notFollowed);
          assertEquals(targetHits, []);
        } finally {
          await redirecting.shutdown();
          await target.shutdown();
        }
      },
    );

    await t.step(
      "a Content-Length past 256 KiB (discovery, JWKS) is refused unread: 400 within seconds",
      async () => {
        // Each oversized answer declares one byte past the cap, sends its start and never the rest: only a refusal
        // on the declared length is done before the 10 s provider timeout.
        const pastCap = 256 * 1024 + 1;
        const declaring = startStalledProvider((path, origin) => {
          if (path === "/declared/.well-known/openid-configuration") {
            return { delayMs: 0, json: { issuer: `${origin}/declared` }, declaredBytes: pastCap };
          }
          if (path === "/keys/.well-known/openid-configuration") {
            const doc = {
              issuer: `${origin}/keys`,
              authorization_endpoint: `${origin}/authorize`,
              token_endpoint: `${origin}/token`,
              jwks_uri: `${origin}/jwks-declared`,
              id_token_signing_alg_values_supported: [op.signingAlg],
            };
            return { delayMs: 0, json: doc };
          }
          if (path === "/jwks-declared") return { delayMs: 0, json: { keys: [] }, declaredBytes: pastCap };
          return path === "/authorize" || path === "/token" ? { delayMs: 0, json: {} } : undefined;
        });
        try {
          for (
            const [name, issuer, reason] of [
              [
                "discovery-declared",
                "declared",
                `discovery failed: ${declaring.origin}/declared/.well-known/openid-configuration `,
              ],
              ["jwks-declared", "keys", `jwks_uri ${declaring.origin}/jwks-declared `],
            ] as const
          ) {
            const id = await createOidcMethod(api, op, name, { issuer: `${declaring.origin}/${issuer}` });
            const started = performance.now();
            const r = await changeState(api, id, { state: "active-public" });
            const ms = performance.now() - started;
            assertEquals(r.status, 400, JSON.stringify(r.body));
            assertEquals(r.body.kind, "InvalidArgument");
            assertStringIncludes(String(r.body.message), `${reason}answered more than 262144 bytes`);
            assert(ms < 4_000, `${name}: change-state took ${Math.round(ms)} ms`);
          }
          assertEquals(declaring.count("/declared/.well-known/openid-configuration"), 1);
          assertEquals(declaring.count("/jwks-declared"), 1);
        } finally {
          await declaring.close();
        }
      },
    );

    await t.step("an issuer where nothing answers is 400", async () => {
      const id = await createOidcMethod(api, op, "no-provider", { issuer: "http://127.0.0.1:9" });
      const r = await changeState(api, id, { state: "active-public" });
      assertEquals(r.status, 400);
      assertMatch(String(r.body.message), /^Unable to change auth method state: /);
    });
  } finally {
    await op.stop();
    await api.stop();
  }
});

Deno.test("OIDC attempts expire: the poll is 403 and the callback 400 after the attempt TTL", async () => {
  const api = await startAuthServer({ WHARF_OIDC_ATTEMPT_TTL: "1s" });
  const op = await startOidcProvider({ redirectUris: [`${api.url}${callbackPath}`] });
  try {
    const id = await createOidcMethod(api, op, "short-ttl");
    await activate(api, id);
    const { authUrl, tokenId } = await start(api, id);
    const callbackUrl = await providerLogin(authUrl);
    // Bounded wait past the 1 s TTL; nothing here depends on tight timing.
    await new Promise((r) => setTimeout(r, 1600));
    const cb = await fetch(callbackUrl, { redirect: "manual" });
    const body = await cb.json();
    assertEquals(cb.status, 400);
    assertEquals(body.message, "Unknown or expired authentication attempt.");
    const r = await poll(api, id, tokenId);
    assertEquals(r.status, 403);
  } finally {
    await op.stop();
    await api.stop();
  }
});

Deno.test({
  name: "OIDC login through the API trusts idp_ca_certs for an HTTPS provider signing with ES256",
  ignore: !opensslAvailable(),
  fn: async () => {
    const api = await startAuthServer();
    const op = await startOidcProvider({
      redirectUris: [`${api.url}${callbackPath}`],
      tls: true,
      signingAlg: "ES256",
    });
    try {
      const caPem = op.pki!.caPem;
      const untrusted = await createOidcMethod(api, op, "https-no-ca");
      const refused = await changeState(api, untrusted, { state: "active-public" });
      assertEquals(refused.status, 400, JSON.stringify(refused.body));

      const id = await createOidcMethod(api, op, "https-sso", { idp_ca_certs: [caPem] });
      await activate(api, id);
      const { authUrl, tokenId } = await start(api, id);
      const { callbackUrl } = await completeProviderLogin(authUrl, {
        login: oidcUsers.bob.login,
        password: oidcUsers.bob.password,
        caPem,
      });
      const cb = await fetch(callbackUrl, { redirect: "manual" });
      await cb.body?.cancel();
      assertEquals(cb.status, 302);
      assertEquals(new URL(cb.headers.get("location")!).pathname, "/authentication-complete");
      const ready = await poll(api, id, tokenId);
      assertEquals(ready.status, 200, JSON.stringify(ready.body));
      const acct = await api.call(
        "GET",
        `/v1/accounts/${(ready.body.attributes as Record<string, string>).account_id}`,
      );
      assertEquals((acct.body.attributes as Record<string, unknown>).subject, oidcUsers.bob.sub);
    } finally {
      await op.stop();
      await api.stop();
    }
  },
});
