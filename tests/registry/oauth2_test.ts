// POST /oauth2/token: client credentials in a form body or as HTTP Basic give a Bearer token; every failure is
// OAuth2 error JSON (docs/registry.md#service-principals-for-ci); wrong secrets are throttled like password logins,
// concurrency included.

import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { ConfigError } from "../../lib/errors.ts";
import { type Answer, createOrg, createUser, type Fixture, registryTest } from "./helpers.ts";
import { type CreatedPrincipal, createPrincipal, tokenCall, type TokenRequest } from "./principal_helpers.ts";
import { tally } from "../helpers/statuses.ts";

async function setup(f: Fixture): Promise<CreatedPrincipal> {
  await createUser(f, "alice");
  await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
  return await createPrincipal(f, "acme", "ci");
}

const grant = (p: CreatedPrincipal, secret = p.client_secret) => ({
  grant_type: "client_credentials",
  client_id: p.client_id,
  client_secret: secret,
});

function assertOAuthError(a: Answer, status: number, error: string, where: string) {
  assertEquals(a.status, status, `${where}: ${a.text}`);
  assertEquals(a.headers.get("content-type"), "application/json", where);
  assertEquals(a.headers.get("cache-control"), "no-store", where);
  assert(a.headers.get("x-request-id"), `${where}: no X-Request-Id`);
  assertEquals(Object.keys(a.body).sort(), ["error", "error_description"], where);
  assertEquals(a.body.error, error, where);
  assert(typeof a.body.error_description === "string" && a.body.error_description.length > 0, where);
}

registryTest("client credentials in a form body give a Bearer token for an hour", async (f) => {
  const p = await setup(f);
  const a = await tokenCall(f, { form: grant(p) });
  assertEquals(a.status, 200, a.text);
  assertEquals(Object.keys(a.body).sort(), ["access_token", "expires_in", "token_type"]);
  assertEquals(a.body.token_type, "Bearer");
  assertEquals(a.body.expires_in, 3600);
  assertEquals(a.headers.get("content-type"), "application/json");
  assertEquals(a.headers.get("cache-control"), "no-store");
  assertEquals(a.headers.get("pragma"), "no-cache");
  const who = await f.api.get("/api/v1/authenticate", { token: a.body.access_token });
  assertEquals(who.status, 200, who.text);
  assertEquals(who.body, { user: { username: "acme" } });
  // A scope parameter and a charset on the type change nothing.
  const scoped = await tokenCall(f, {
    form: { ...grant(p), scope: "boxes" },
    headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf-8" },
  });
  assertEquals(scoped.status, 200, scoped.text);
});

registryTest("client credentials as HTTP Basic give a token too", async (f) => {
  const p = await setup(f);
  const a = await tokenCall(f, {
    form: { grant_type: "client_credentials" },
    basic: [p.client_id, p.client_secret],
  });
  assertEquals(a.status, 200, a.text);
  assertEquals(a.body.token_type, "Bearer");
  // The same client id in the body beside Basic is allowed (OAuth2 lets a client repeat it there).
  const both = await tokenCall(f, {
    form: { grant_type: "client_credentials", client_id: p.client_id },
    basic: [p.client_id, p.client_secret],
  });
  assertEquals(both.status, 200, both.text);
  const who = await f.api.get("/api/v2/authenticate", { token: both.body.access_token });
  assertEquals(who.body, { user: { username: "acme" } });
});

registryTest(
  "WHARF_REGISTRY_SP_TOKEN_TTL sets expires_in",
  { WHARF_REGISTRY_SP_TOKEN_TTL: "90s" },
  async (f) => {
    const p = await setup(f);
    const a = await tokenCall(f, { form: grant(p) });
    assertEquals(a.body.expires_in, 90);
  },
);

Deno.test("a WHARF_REGISTRY_SP_TOKEN_TTL under 1s or malformed stops the server at start", async () => {
  for (const value of ["0", "999ms", "soon"]) {
    const dir = await Deno.makeTempDir({ prefix: "wharf-sp-ttl-" });
    try {
      await assertRejects(
        () => startTestServer({ WHARF_REGISTRY_SP_TOKEN_TTL: value }, dir),
        (err) => err instanceof ConfigError && err.message.includes("WHARF_REGISTRY_SP_TOKEN_TTL"),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

registryTest("every malformed or refused token request is an OAuth2 JSON error", async (f) => {
  const p = await setup(f);
  const cases: Array<[string, TokenRequest, number, string]> = [
    [
      "no grant_type",
      { form: { client_id: p.client_id, client_secret: p.client_secret } },
      400,
      "invalid_request",
    ],
    ["empty body", { form: "" }, 400, "invalid_request"],
    ["password grant", { form: { ...grant(p), grant_type: "password" } }, 400, "unsupported_grant_type"],
    [
      "authorization_code grant",
      { form: { ...grant(p), grant_type: "authorization_code" } },
      400,
      "unsupported_grant_type",
    ],
    [
      "JSON body",
      { form: JSON.stringify(grant(p)), headers: { "Content-Type": "application/json" } },
      400,
      "invalid_request",
    ],
    [
      "repeated parameter",
      { form: `${new URLSearchParams(grant(p))}&grant_type=client_credentials` },
      400,
      "invalid_request",
    ],
    [
      "Basic and a body secret",
      { form: grant(p), basic: [p.client_id, p.client_secret] },
      400,
      "invalid_request",
    ],
    [
      "Basic and another body client_id",
      {
        form: { grant_type: "client_credentials", client_id: "sp_other" },
        basic: [p.client_id, p.client_secret],
      },
      400,
      "invalid_request",
    ],
    [
      "secret in the URL",
      { form: { grant_type: "client_credentials" }, query: `?client_id=${p.client_id}&client_secret=x` },
      400,
      "invalid_request",
    ],
    ["no client authentication", { form: { grant_type: "client_credentials" } }, 401, "invalid_client"],
    [
      "client id without secret",
      { form: { grant_type: "client_credentials", client_id: p.client_id } },
      401,
      "invalid_client",
    ],
    ["wrong secret in the body", { form: grant(p, "wharf_sp_wrong") }, 401, "invalid_client"],
    ["unknown client id", { form: { ...grant(p), client_id: "sp_unknown" } }, 401, "invalid_client"],
    [
      "wrong secret as Basic",
      { form: { grant_type: "client_credentials" }, basic: [p.client_id, "nope"] },
      401,
      "invalid_client",
    ],
    [
      "a Bearer header",
      { form: { grant_type: "client_credentials" }, headers: { Authorization: "Bearer wharf_x" } },
      401,
      "invalid_client",
    ],
    [
      "Basic that is not base64",
      { form: { grant_type: "client_credentials" }, headers: { Authorization: "Basic %%%" } },
      401,
      "invalid_client",
    ],
    [
      "Basic without a colon",
      { form: { grant_type: "client_credentials" }, headers: { Authorization: `Basic ${btoa("abc")}` } },
      401,
      "invalid_client",
    ],
    ["GET", { method: "GET" }, 405, "invalid_request"],
    ["PUT", { method: "PUT", form: grant(p) }, 405, "invalid_request"],
    [
      "a 20 KiB body",
      { form: `grant_type=client_credentials&x=${"a".repeat(20_000)}` },
      413,
      "invalid_request",
    ],
  ];
  for (const [where, request, status, error] of cases) {
    const a = await tokenCall(f, request);
    assertOAuthError(a, status, error, where);
    const challenge = a.headers.get("www-authenticate");
    const basicFailure = status === 401 && (request.basic !== undefined || where.startsWith("Basic") ||
      where === "no client authentication" || where === "a Bearer header");
    assertEquals(
      challenge?.startsWith("Basic ") ?? false,
      basicFailure,
      `${where}: WWW-Authenticate ${challenge}`,
    );
    if (status === 405) assertEquals(a.headers.get("allow"), "POST", where);
  }
  const notUtf8 = await f.api.call("POST", "/oauth2/token", {
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    raw: new Uint8Array([...new TextEncoder().encode("grant_type=client_credentials&x="), 0xff, 0xfe]),
  });
  assertOAuthError(notUtf8, 400, "invalid_request", "body not UTF-8");
  // None of these failures counted against the right secret.
  assertEquals((await tokenCall(f, { form: grant(p) })).status, 200);
});

registryTest("maintenance answers the token endpoint with 503 temporarily_unavailable", async (f) => {
  const p = await setup(f);
  const on = await f.api.put("/api/v1/admin/maintenance", { enabled: true }, { token: f.admin });
  assertEquals(on.status, 200, on.text);
  const a = await tokenCall(f, { form: grant(p) });
  assertOAuthError(a, 503, "temporarily_unavailable", "maintenance");
  assertEquals(a.headers.get("retry-after"), "60");
});

registryTest("concurrent wrong secrets for one client get at most the limit of invalid_client answers", {
  WHARF_REGISTRY_LOGIN_FAILURES: "5",
}, async (f) => {
  const p = await setup(f);
  const answers = await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) =>
        i % 2
          ? tokenCall(f, { form: grant(p, `wrong-${i}`) })
          : tokenCall(f, { form: { grant_type: "client_credentials" }, basic: [p.client_id, `wrong-${i}`] }),
    ),
  );
  assertEquals(tally(answers), { 401: 5, 429: 35 });
  for (const a of answers) {
    if (a.status === 401) assertOAuthError(a, 401, "invalid_client", "wrong secret");
    else {
      assertOAuthError(a, 429, "temporarily_unavailable", "throttled");
      assert(Number(a.headers.get("Retry-After")) > 0, a.text);
    }
  }
  // The limit was reached: the right secret waits for the window too, as a password would.
  assertEquals((await tokenCall(f, { form: grant(p) })).status, 429);
  // Another principal is not affected.
  const other = await createPrincipal(f, "acme", "other");
  assertEquals((await tokenCall(f, { form: grant(other) })).status, 200);
});

registryTest("wrong secrets and wrong passwords from one IP share the 50-failure limit", async (f) => {
  await setup(f);
  const guesses = Array.from(
    { length: 30 },
    (_, i) =>
      tokenCall(f, {
        form: { grant_type: "client_credentials", client_id: `sp_guess${i}`, client_secret: "x" },
      }),
  );
  const logins = Array.from(
    { length: 30 },
    (_, i) =>
      f.api.post("/api/v1/authenticate", { user: { login: `nobody-${i}`, password: "wrong-password" } }),
  );
  const answers = await Promise.all([...guesses, ...logins]);
  assertEquals(tally(answers), { 401: 50, 429: 10 });
});

registryTest("concurrent right secrets all get tokens", { WHARF_REGISTRY_LOGIN_FAILURES: "2" }, async (f) => {
  const p = await setup(f);
  const answers = await Promise.all(Array.from({ length: 12 }, () => tokenCall(f, { form: grant(p) })));
  assertEquals(tally(answers), { 200: 12 });
  assertEquals(new Set(answers.map((a) => a.body.access_token)).size, 12);
});

registryTest("the name oauth2 is reserved for users and organizations", async (f) => {
  for (const name of ["oauth2", "OAuth2"]) {
    const u = await f.api.post("/api/v1/admin/users", {
      user: { username: name, email: `${name}@example.com`, password: "a-long-password" },
    }, { token: f.admin });
    assertEquals([u.status, u.body.errors], [422, ["Username is reserved"]]);
    const o = await f.api.post("/api/v1/admin/organizations", { organization: { name } }, { token: f.admin });
    assertEquals([o.status, o.body.errors], [422, ["Name is reserved"]]);
  }
});
