// Registry tokens, admin bootstrap and the admin API's access rules
// (docs/registry.md#getting-a-token, docs/registry.md#users-and-organizations-admin-api).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { startTestServer } from "../helpers/server.ts";
import { Client, createUser, publishExternal, registryTest } from "./helpers.ts";
import { storedText } from "../helpers/stored.ts";

Deno.test("bootstrap prints a generated admin password once and never again after a restart", async () => {
  let srv = await startTestServer();
  try {
    const line = srv.announced.find((l) => l.includes('"admin"'));
    assert(line, "an announcement about admin");
    const password = /password (\S+)/.exec(line)![1]!;
    assertEquals(password.length, 24);
    const api = new Client(srv.url);
    await api.login("admin", password);
    srv = await srv.restart();
    assertEquals(srv.announced.length, 0);
    await new Client(srv.url).login("ADMIN", password);
  } finally {
    await srv.stop();
  }
});

Deno.test("bootstrap never prints a password given in WHARF_REGISTRY_ADMIN_PASSWORD", () =>
  withStarted(() => startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: "given-password-9" }), async (srv) => {
    assert(!srv.announced.join("\n").includes("given-password-9"));
    await new Client(srv.url).login("admin", "given-password-9");
  }));

Deno.test("startup fails when WHARF_REGISTRY_ADMIN_PASSWORD is shorter than 8 characters", async () => {
  let failed = false;
  try {
    const srv = await startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: "short" });
    await srv.stop();
  } catch (err) {
    failed = /at least 8/.test(String(err));
  }
  assert(failed);
});

registryTest("authenticate returns exactly the token fields and every token source validates", async (f) => {
  await createUser(f, "alice");
  const a = await f.api.post("/api/v1/authenticate", {
    user: { login: "ALICE@example.com", password: "alice-password" },
    token: { description: "ci" },
    two_factor: { code: null },
  });
  assertEquals(a.status, 200);
  assertEquals(Object.keys(a.body).sort(), ["created_at", "description", "token", "token_hash"]);
  assertEquals(a.body.description, "ci");
  assertMatch(a.body.token, /^wharf_[A-Za-z0-9_-]{43}$/);
  assertMatch(a.body.token_hash, /^[0-9a-f]{64}$/);
  assertMatch(a.body.created_at, /\.\d{3}Z$/);
  const t = a.body.token as string;
  const sources: Array<[string, Record<string, string>]> = [
    ["/api/v1/authenticate", { Authorization: `Bearer ${t}` }],
    [`/api/v1/authenticate?access_token=${t}`, {}],
    ["/api/v1/authenticate", { "X-Service-Token": t }],
    ["/api/v1/authenticate", { "X-Atlas-Token": t }],
    ["/api/v1/authenticate", { Authorization: "Basic eDp5", "X-Atlas-Token": t }],
  ];
  for (const [path, headers] of sources) {
    const v = await f.api.get(path, { headers });
    assertEquals(v.status, 200, `${path} ${JSON.stringify(headers)}`);
    assertEquals(v.body, { user: { username: "alice" } });
    assertEquals(v.headers.get("Content-Type"), "application/json");
  }
  // The first present source wins, valid or not.
  const first = await f.api.get("/api/v1/authenticate", {
    headers: { Authorization: "Bearer nope", "X-Atlas-Token": t },
  });
  assertEquals(first.status, 401);
});

registryTest(
  "authenticate rejects missing fields with 422 and bad credentials with one 401 message",
  async (f) => {
    await createUser(f, "alice");
    const missing = await f.api.post("/api/v1/authenticate", { user: {} });
    assertEquals(missing.status, 422);
    assertEquals(missing.body, {
      errors: ["Login can't be blank", "Password can't be blank"],
      success: false,
    });
    for (const login of ["alice", "nobody"]) {
      const bad = await f.api.post("/api/v1/authenticate", { user: { login, password: "wrong-password" } });
      assertEquals(bad.status, 401);
      assertEquals(bad.body, { errors: ["Invalid login or password!"], success: false });
    }
    const noToken = await f.api.get("/api/v1/authenticate");
    assertEquals(noToken.body.errors, ["Authentication required!"]);
    const badToken = await f.api.get("/api/v1/authenticate", { token: "wharf_bogus" });
    assertEquals(badToken.status, 401);
    assertEquals(badToken.body.errors, ["Bad access token!"]);
  },
);

registryTest("failed logins beyond the limit are throttled with 429 and Retry-After", {
  WHARF_REGISTRY_LOGIN_FAILURES: "3",
}, async (f) => {
  await createUser(f, "alice");
  for (let i = 0; i < 3; i++) {
    assertEquals(
      (await f.api.post("/api/v1/authenticate", { user: { login: "alice", password: "nope-nope" } }))
        .status,
      401,
    );
  }
  const limited = await f.api.post("/api/v1/authenticate", {
    user: { login: "alice", password: "alice-password" },
  });
  assertEquals(limited.status, 429);
  assert(Number(limited.headers.get("Retry-After")) > 0);
});

registryTest(
  "DELETE authenticate revokes only the presenting token and no plaintext reaches disk",
  async (f) => {
    const t1 = await createUser(f, "alice");
    const t2 = await f.api.login("alice", "alice-password");
    const del = await f.api.delete("/api/v1/authenticate", { token: t1 });
    assertEquals(del.status, 204);
    assertEquals(del.text, "");
    assertEquals((await f.api.get("/api/v1/authenticate", { token: t1 })).status, 401);
    assertEquals((await f.api.get("/api/v1/authenticate", { token: t2 })).status, 200);
    assertEquals((await f.api.delete("/api/v1/authenticate")).status, 401);
    await f.srv.server.data.store.checkpoint();
    const stored = await storedText(f.srv);
    assert(stored.some((s) => s.text.includes("alice@example.com")), "the search reads where users are kept");
    const found = stored.filter(({ text }) =>
      text.includes(t1.slice(6)) || text.includes(t2.slice(6)) || text.includes("alice-password")
    ).map((s) => s.where);
    assertEquals(found, []);
  },
);

registryTest("an invalid token reads public resources anonymously but cannot write", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox");
  const bad = "wharf_" + "x".repeat(43);
  for (
    const path of [
      "/api/v1/user/alice",
      "/api/v1/search",
      "/api/v1/box/alice/devbox",
      "/api/v1/box/alice/devbox/version/1.0.0",
      "/api/v1/box/alice/devbox/version/1.0.0/provider/virtualbox",
      "/alice/devbox",
    ]
  ) {
    assertEquals((await f.api.get(path, { token: bad })).status, 200, path);
  }
  const dl = await f.api.get("/alice/boxes/devbox/versions/1.0.0/providers/virtualbox.box", { token: bad });
  assertEquals(dl.status, 302);
  const write = await f.api.post("/api/v1/boxes", { name: "other" }, { token: bad });
  assertEquals(write.status, 401);
  assertEquals(write.body.errors, ["Bad access token!"]);
  assertEquals((await f.api.post("/api/v1/boxes", { name: "other" })).body.errors, [
    "Authentication required!",
  ]);
});

registryTest("expired tokens are rejected when WHARF_REGISTRY_TOKEN_TTL has passed", {
  WHARF_REGISTRY_TOKEN_TTL: "300ms",
}, async (f) => {
  await new Promise((r) => setTimeout(r, 400));
  assertEquals((await f.api.get("/api/v1/authenticate", { token: f.admin })).status, 401);
});
