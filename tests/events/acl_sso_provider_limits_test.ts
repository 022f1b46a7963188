// Nomad SSO logins against a misbehaving OpenID provider (a local HTTP server): a discovery URL or JWKS URL
// answering a redirect is refused without following it, an endless discovery or JWKS answer is refused once
// it passes 256 KiB, and one declaring a Content-Length past 256 KiB is refused before its body is read, each
// within seconds, while wharf goes on serving; a deleted auth method's cached provider answers go with it
// (docs/security.md#openid-providers).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startStalledProvider } from "../fixtures/stalled_provider.ts";
import { startTestServer } from "../helpers/server.ts";
import { call, rootSecret } from "./stream_helpers.ts";
import { unverifiableToken } from "./sso_oidc_helpers.ts";

const redirectUri = "http://localhost:4649/oidc/callback";
/** What "promptly" means here: the provider timeout is 10 s, the cap is reached in well under a second. */
const promptMs = 4_000;
/** One byte past the cap: what the oversized answers declare as their Content-Length. */
const pastCap = 256 * 1024 + 1;

/** A body that never ends: 16 KiB every 10 ms (1.6 MB/s) until the reader goes away. */
function endlessBody(): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
  let first = true;
  return new ReadableStream({
    async pull(controller) {
      if (first) {
        first = false;
        controller.enqueue(new TextEncoder().encode('{"issuer":"'));
        return;
      }
      await new Promise((r) => setTimeout(r, 10));
      controller.enqueue(chunk);
    },
  });
}

Deno.test("Nomad SSO: provider redirects are not followed and endless or oversized provider answers are cut at 256 KiB", async () => {
  // The place a redirect points to: it must never be asked anything.
  const targetHits: string[] = [];
  const target = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (req) => {
    targetHits.push(new URL(req.url).pathname);
    return Response.json({ keys: [] });
  });
  const targetOrigin = `http://127.0.0.1:${target.addr.port}`;
  const provider = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    const origin = url.origin;
    switch (url.pathname) {
      case "/redirect/.well-known/openid-configuration":
      case "/jwks-redirect":
        return Response.redirect(`${targetOrigin}${url.pathname}`, 302);
      case "/endless/.well-known/openid-configuration":
      case "/jwks-endless":
        return new Response(endlessBody(), { headers: { "content-type": "application/json" } });
      case "/keys/.well-known/openid-configuration":
        return Response.json({
          issuer: `${origin}/keys`,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          jwks_uri: `${origin}/jwks-endless`,
        });
      case "/token":
        return Response.json({ id_token: unverifiableToken(), token_type: "Bearer", access_token: "a" });
      default:
        return new Response("not found", { status: 404 });
    }
  });
  const origin = `http://127.0.0.1:${provider.addr.port}`;
  // Declares a body one byte past the cap, sends its start and never the rest: only a refusal on the declared
  // length is done before the 10 s provider timeout.
  const declaring = startStalledProvider((path, at) => {
    if (path === "/declared/.well-known/openid-configuration") {
      const doc = { issuer: `${at}/declared`, jwks_uri: `${at}/jwks-declared` };
      return { delayMs: 0, json: doc, declaredBytes: pastCap };
    }
    return path === "/jwks-declared" ? { delayMs: 0, json: { keys: [] }, declaredBytes: pastCap } : undefined;
  });
  const logLines: string[] = [];
  const srv = await startTestServer({ WHARF_ACL_BOOTSTRAP_SECRET: rootSecret }, undefined, { logLines });
  /** The reason the log gives for method `name`'s failed discovery (auth-url's 502 does not show it). */
  const loggedDiscoveryFailure = (name: string) =>
    logLines.find((l) => l.includes("OIDC discovery failed") && l.includes(`"auth_method":"${name}"`)) ?? "";
  try {
    const put = (path: string, body: unknown, token?: string) => call(srv.url, "PUT", path, { body, token });
    const timed = async (path: string, body: unknown) => {
      const started = performance.now();
      const r = await put(path, body);
      return { ...r, ms: performance.now() - started };
    };
    for (
      const [name, issuer] of [
        ["redirected", `${origin}/redirect`],
        ["endless", `${origin}/endless`],
        ["keys", `${origin}/keys`],
        ["declared", `${declaring.origin}/declared`],
      ]
    ) {
      const r = await put("/v1/acl/auth-method", {
        Name: name,
        Type: "OIDC",
        TokenLocality: "local",
        MaxTokenTTL: "1h",
        Config: {
          OIDCDiscoveryURL: issuer,
          OIDCClientID: "wharf",
          OIDCClientSecret: "secret",
          AllowedRedirectURIs: [redirectUri],
        },
      }, rootSecret);
      assertEquals(r.status, 200, r.text);
    }
    for (
      const [name, config] of [
        ["jwks-redirected", { JWKSURL: `${origin}/jwks-redirect` }],
        ["jwks-endless", { JWKSURL: `${origin}/jwks-endless` }],
        ["discovery-endless", { OIDCDiscoveryURL: `${origin}/endless` }],
        ["jwks-declared", { JWKSURL: `${declaring.origin}/jwks-declared` }],
        ["discovery-declared", { OIDCDiscoveryURL: `${declaring.origin}/declared` }],
      ] as const
    ) {
      const r = await put("/v1/acl/auth-method", {
        Name: name,
        Type: "JWT",
        TokenLocality: "local",
        MaxTokenTTL: "1h",
        Config: { BoundAudiences: ["wharf"], ...config },
      }, rootSecret);
      assertEquals(r.status, 200, r.text);
    }
    const authUrl = (method: string, nonce: string) =>
      timed("/v1/acl/oidc/auth-url", {
        AuthMethodName: method,
        RedirectURI: redirectUri,
        ClientNonce: nonce,
      });
    const stillServes = async () => {
      const r = await call(srv.url, "GET", "/v1/acl/auth-methods", { token: rootSecret });
      assertEquals(r.status, 200, r.text);
    };

    // (1) A discovery URL answering 302: a 502 in Nomad's text/plain shape (a server error hides its reason;
    // the log names it), the redirect target never asked.
    const redirected = await authUrl("redirected", "nonce-redirect");
    assertEquals(redirected.status, 502, redirected.text);
    assertEquals(redirected.headers.get("content-type")?.split(";")[0], "text/plain");
    assertStringIncludes(redirected.text, "Internal error (request ");
    assertEquals(targetHits, []);
    assertStringIncludes(
      loggedDiscoveryFailure("redirected"),
      "answered a redirect (HTTP 302), which is not followed",
    );

    // (2) An endless discovery document: refused at 256 KiB, in well under the 10 s provider timeout.
    const endless = await authUrl("endless", "nonce-endless");
    assertEquals(endless.status, 502, endless.text);
    assert(endless.ms < promptMs, `auth-url took ${Math.round(endless.ms)} ms`);
    assertStringIncludes(loggedDiscoveryFailure("endless"), "answered more than 262144 bytes");
    await stillServes();

    // An endless JWKS behind a valid discovery document: complete-auth refused at 256 KiB.
    const started = await authUrl("keys", "nonce-keys");
    assertEquals(started.status, 200, started.text);
    const state = new URL(String((started.json as Record<string, unknown>).AuthURL)).searchParams.get(
      "state",
    );
    const completed = await timed("/v1/acl/oidc/complete-auth", {
      AuthMethodName: "keys",
      ClientNonce: "nonce-keys",
      State: state,
      Code: "code",
      RedirectURI: redirectUri,
    });
    assertEquals(completed.status, 401, completed.text);
    assertStringIncludes(completed.text, "failed to exchange token with provider: ");
    assertStringIncludes(completed.text, "answered more than 262144 bytes");
    assert(completed.ms < promptMs, `complete-auth took ${Math.round(completed.ms)} ms`);
    await stillServes();

    // JWT auth methods: a JWKSURL answering 302, an endless JWKSURL, an endless discovery document.
    const login = (method: string) =>
      timed("/v1/acl/login", { AuthMethodName: method, LoginToken: unverifiableToken() });
    /** A JWT login of `method` is refused within seconds, its 401 naming the 256 KiB cap. */
    const refusedAtCap = async (method: string) => {
      const r = await login(method);
      assertEquals(r.status, 401, r.text);
      assertStringIncludes(r.text, "unable to validate provided token: ");
      assertStringIncludes(r.text, "answered more than 262144 bytes");
      assert(r.ms < promptMs, `${method} login took ${Math.round(r.ms)} ms`);
    };
    const jwksRedirected = await login("jwks-redirected");
    assertEquals(jwksRedirected.status, 401, jwksRedirected.text);
    assertStringIncludes(jwksRedirected.text, "answered a redirect (HTTP 302), which is not followed");
    for (const method of ["jwks-endless", "discovery-endless"]) await refusedAtCap(method);
    await stillServes();
    assertEquals(targetHits, []);

    // A discovery document or JWKS declaring a Content-Length past 256 KiB: refused on the declared length, its
    // body never waited for (auth-url's 502 names the cap in the log, the JWT logins' 401 in the answer).
    const declared = await authUrl("declared", "nonce-declared");
    assertEquals(declared.status, 502, declared.text);
    assertEquals(declared.headers.get("content-type")?.split(";")[0], "text/plain");
    assert(declared.ms < promptMs, `auth-url took ${Math.round(declared.ms)} ms`);
    assertStringIncludes(loggedDiscoveryFailure("declared"), "answered more than 262144 bytes");
    for (const method of ["jwks-declared", "discovery-declared"]) await refusedAtCap(method);
    assertEquals(declaring.count("/declared/.well-known/openid-configuration"), 2);
    assertEquals(declaring.count("/jwks-declared"), 1);
    await stillServes();
  } finally {
    await srv.stop();
    await declaring.close();
    await provider.shutdown();
    await target.shutdown();
  }
});

Deno.test("Nomad SSO: a deleted auth method's cached discovery goes with it; one re-created by its name asks again", async () => {
  // The provider's discovery names authorization endpoint /authorize-<generation>.
  let generation = 1;
  const discoveries: string[] = [];
  const provider = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname !== "/op/.well-known/openid-configuration") {
      return new Response("not found", { status: 404 });
    }
    discoveries.push(url.pathname);
    return Response.json({
      issuer: `${url.origin}/op`,
      authorization_endpoint: `${url.origin}/authorize-${generation}`,
      token_endpoint: `${url.origin}/token`,
      jwks_uri: `${url.origin}/jwks`,
    });
  });
  const srv = await startTestServer({ WHARF_ACL_BOOTSTRAP_SECRET: rootSecret });
  try {
    const method = {
      Name: "recreated",
      Type: "OIDC",
      TokenLocality: "local",
      MaxTokenTTL: "1h",
      Config: {
        OIDCDiscoveryURL: `http://127.0.0.1:${provider.addr.port}/op`,
        OIDCClientID: "wharf",
        OIDCClientSecret: "secret",
        AllowedRedirectURIs: [redirectUri],
      },
    };
    const create = async () => {
      const r = await call(srv.url, "PUT", "/v1/acl/auth-method", { body: method, token: rootSecret });
      assertEquals(r.status, 200, r.text);
    };
    /** The path of the authorization URL auth-url answers. */
    const authorizePath = async (nonce: string) => {
      const r = await call(srv.url, "PUT", "/v1/acl/oidc/auth-url", {
        body: { AuthMethodName: "recreated", RedirectURI: redirectUri, ClientNonce: nonce },
      });
      assertEquals(r.status, 200, r.text);
      return new URL(String((r.json as Record<string, unknown>).AuthURL)).pathname;
    };
    await create();
    assertEquals(await authorizePath("nonce-1"), "/authorize-1");
    // Kept for later logins of the same method (10 minutes): no second discovery.
    assertEquals(await authorizePath("nonce-2"), "/authorize-1");
    assertEquals(discoveries.length, 1);

    const deleted = await call(srv.url, "DELETE", "/v1/acl/auth-method/recreated", { token: rootSecret });
    assertEquals(deleted.status, 200, deleted.text);
    generation = 2;
    // The same name and the same configuration (so the same Hash): a new method, which asks the provider.
    await create();
    assertEquals(await authorizePath("nonce-3"), "/authorize-2");
    assertEquals(discoveries.length, 2);
  } finally {
    await srv.stop();
    await provider.shutdown();
  }
});
