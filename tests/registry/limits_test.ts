// Error shapes, rate limiting, maintenance and hostile input
// (docs/registry.md#configuration, docs/security.md).

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client, createUser, publishExternal, registryTest, startRegistry } from "./helpers.ts";

registryTest(
  "every failure has the JSON errors body: unknown routes, 405, bad JSON, big bodies",
  async (f) => {
    const alice = await createUser(f, "alice");
    const unknown = await f.api.get("/api/v1/nope/nothing");
    assertEquals([unknown.status, unknown.body], [404, { errors: ["Resource not found!"], success: false }]);
    assertEquals(unknown.headers.get("Content-Type"), "application/json");
    const method = await f.api.call("PATCH", "/api/v1/box/alice/devbox");
    assertEquals(method.status, 405);
    assertEquals(method.body.success, false);
    assertEquals(method.headers.get("Allow"), "GET, PUT, DELETE, HEAD");
    const postSearch = await f.api.post("/api/v1/search", {});
    assertEquals(postSearch.status, 405);
    const badJson = await f.api.call("POST", "/api/v1/boxes", {
      raw: "{nope",
      token: alice,
      headers: { "Content-Type": "text/plain" },
    });
    assertEquals([badJson.status, badJson.body], [400, {
      errors: ["Request body is not valid JSON"],
      success: false,
    }]);
    const array = await f.api.call("POST", "/api/v1/boxes", { raw: "[1]", token: alice });
    assertEquals(array.status, 400);
    const big = await f.api.call("POST", "/api/v1/boxes", {
      raw: "x".repeat(1024 * 1024 + 10),
      token: alice,
    });
    assertEquals(big.status, 413);
    assertEquals(big.body.success, false);
    // Empty bodies with a JSON Content-Type count as {} (vagrant sends them on release and revoke).
    const empty = await f.api.call("POST", "/api/v1/boxes", {
      raw: "",
      token: alice,
      headers: { "Content-Type": "application/json" },
    });
    assertEquals([empty.status, empty.body.errors], [422, ["Name can't be blank"]]);
    const echoed = await f.api.get("/api/v1/search", { headers: { "X-Request-Id": "abc-123" } });
    assertEquals(echoed.headers.get("X-Request-Id"), "abc-123");
    assert((await f.api.get("/api/v1/nope")).headers.get("X-Request-Id"));
    const encoded = await f.api.get("/api/v1/box/alice%2Fx/devbox");
    assertEquals(encoded.status, 404);
    // Other families keep their own 404 shape on root-looking paths.
    const events = await f.api.call("POST", "/v1/nothing-here");
    assertEquals(events.status, 404);
    assert(!events.text.includes('"success"'));
  },
);

registryTest("WHARF_MAX_BODY_BYTES bounds a registry JSON body however it is sent", {
  WHARF_MAX_BODY_BYTES: "4096",
}, async (f) => {
  const alice = await createUser(f, "alice");
  const body = JSON.stringify({ box: { name: "devbox", description: "d".repeat(8000) } });
  const stream = (text: string) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        // Two chunks and no Content-Length: the body arrives chunked.
        const bytes = new TextEncoder().encode(text);
        controller.enqueue(bytes.subarray(0, 100));
        controller.enqueue(bytes.subarray(100));
        controller.close();
      },
    });
  for (const [label, init] of [["Content-Length", { body }], ["chunked", { body: stream(body) }]] as const) {
    const r = await fetch(`${f.srv.url}/api/v1/boxes`, {
      method: "POST",
      headers: { Authorization: `Bearer ${alice}`, "Content-Type": "application/json" },
      ...init,
    });
    const answer = await r.json();
    assertEquals(
      [r.status, answer.success],
      [413, false],
      `${label}: ${JSON.stringify(answer).slice(0, 200)}`,
    );
  }
  const small = await f.api.post("/api/v1/boxes", { box: { name: "devbox", description: "short" } }, {
    token: alice,
  });
  assertEquals(small.status, 200, small.text);
});

registryTest("the rate limit answers 429 with Retry-After per token, other tokens unaffected", {
  WHARF_RATE_LIMIT_RPS: "1",
  WHARF_RATE_LIMIT_BURST: "2",
}, async (f) => {
  const alice = await createUser(f, "alice");
  await new Promise((r) => setTimeout(r, 2500)); // every bucket refills (1 per second, burst 2)
  const results = [];
  for (let i = 0; i < 3; i++) results.push(await f.api.get("/api/v1/search", { token: f.admin }));
  assertEquals(results.map((r) => r.status), [200, 200, 429]);
  assert(Number(results[2]!.headers.get("Retry-After")) >= 1);
  assertEquals(results[2]!.body.errors[0].startsWith("Rate limit exceeded; retry in"), true);
  assertEquals((await f.api.get("/api/v1/search", { token: alice })).status, 200);
  // Invalid tokens count against the client IP: random tokens cannot dodge the limit.
  const random = [];
  for (let i = 0; i < 3; i++) {
    random.push((await f.api.get("/api/v1/search", { token: `wharf_random${i}` })).status);
  }
  assertEquals(random, [200, 200, 429]);
});

registryTest("maintenance by variable answers 503 to everyone but admins, other families unaffected", {
  WHARF_MAINTENANCE: "1",
}, async (f) => {
  const r = await f.api.get("/api/v1/search");
  assertEquals(r.status, 503);
  assertEquals(r.body, { errors: ["wharf is down for maintenance; try again later"], success: false });
  assertEquals(r.headers.get("Retry-After"), "60");
  assertEquals((await f.api.get("/alice/devbox")).status, 503);
  assertEquals((await f.api.get("/api/v1/search", { token: f.admin })).status, 200);
  assertEquals((await f.api.get("/health")).status, 200);
  const state = await f.api.get("/api/v1/admin/maintenance", { token: f.admin });
  assertEquals(state.body, { enabled: true, forced: true });
});

Deno.test("the maintenance toggle survives a restart and lets admins log in", async () => {
  let f = await startRegistry();
  try {
    const alice = await createUser(f, "alice");
    const on = await f.api.put("/api/v1/admin/maintenance", { enabled: true }, { token: f.admin });
    assertEquals(on.body, { enabled: true, forced: false });
    const srv = await f.srv.restart();
    f = { ...f, srv, api: new Client(srv.url), stop: () => srv.stop() };
    assertEquals((await f.api.get("/api/v1/authenticate", { token: alice })).status, 503);
    const userLogin = await f.api.post("/api/v1/authenticate", {
      user: { login: "alice", password: "alice-password" },
    });
    assertEquals(userLogin.status, 503);
    const admin = await f.api.login("admin", "admin-password-1");
    assertEquals(
      (await f.api.put("/api/v1/admin/maintenance", { enabled: false }, { token: admin })).status,
      200,
    );
    assertEquals((await f.api.get("/api/v1/authenticate", { token: alice })).status, 200);
  } finally {
    await f.stop();
  }
});

registryTest("hostile requests never produce a 5xx", { WHARF_RATE_LIMIT_RPS: "0" }, async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox");
  const segments = [
    "..",
    "%2F",
    "%2e%2e",
    "%00",
    "a".repeat(300),
    "alice",
    "devbox",
    "1.0.0",
    "virtualbox",
    "x.box",
    "%ff",
    "~",
    "%252F",
  ];
  const bases = [
    "/api/v1/box/",
    "/api/v1/user/",
    "/",
    "/alice/boxes/",
    "/api/v1/uploads/",
    "/api/v1/admin/users/",
    "/api/v1/box/alice/devbox/version/",
  ];
  const bodies = [
    "",
    "{",
    "null",
    "[]",
    '{"box":[]}',
    '{"name":{"x":1}}',
    '{"version":{"version":null}}',
    "\u0000",
    '{"provider":{"name":7}}',
  ];
  const methods = ["GET", "POST", "PUT", "DELETE", "HEAD"];
  let n = 0;
  for (let i = 0; i < 400; i++) {
    const pick = <T>(xs: T[]) => xs[(i * 7919 + n++ * 104729) % xs.length]!;
    const path = pick(bases) +
      [pick(segments), pick(segments), pick(segments)].slice(0, 1 + (i % 3)).join("/");
    const method = pick(methods);
    const r = await fetch(f.srv.url + path, {
      method,
      headers: { Authorization: `Bearer ${i % 2 ? alice : "junk"}`, "Content-Type": "application/json" },
      body: method === "GET" || method === "HEAD" ? undefined : pick(bodies),
    });
    await r.body?.cancel();
    assert(r.status < 500, `${method} ${path} → ${r.status}`);
  }
});
