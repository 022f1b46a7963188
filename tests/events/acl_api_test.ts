// The ACL HTTP API: bootstrap, policy and token CRUD with their events, token validation and token self
// (docs/events.md#acl-policies-for-stream-readers).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  call,
  createToken,
  eventsServerTest,
  putPolicy,
  rootSecret,
  startEventsServer,
  subscribe,
} from "./stream_helpers.ts";

Deno.test("acl bootstrap returns a management secret once and emits no event", async () => {
  const srv = await startTestServer({ WHARF_EVENTS_HEARTBEAT_MS: "50" });
  try {
    const first = await call(srv.url, "POST", "/v1/acl/bootstrap");
    assertEquals(first.status, 200);
    const token = first.json as Record<string, unknown>;
    assertEquals(token.Type, "management");
    assertEquals(token.Name, "Bootstrap Token");
    assertEquals(token.Global, true);
    assertMatch(String(token.SecretID), /^[0-9a-f-]{36}$/);
    assertEquals(first.headers.get("X-Nomad-Index"), String(token.CreateIndex));
    const again = await call(srv.url, "PUT", "/v1/acl/bootstrap");
    assertEquals([again.status, again.text], [
      400,
      `ACL bootstrap already done (reset index: ${token.CreateIndex})`,
    ]);
    const s = await subscribe(srv.url, "index=0&topic=ACLToken&topic=ACLPolicy", String(token.SecretID));
    assertEquals(await s.dataUntilQuiet(300), []);
    await s.close();
  } finally {
    await srv.stop();
  }
});

Deno.test("acl bootstrap rejects a non-UUID secret and answers 400 when the server bootstrapped itself", async () => {
  const fresh = await startTestServer();
  const preset = await startEventsServer();
  try {
    const bad = await call(fresh.url, "POST", "/v1/acl/bootstrap", { body: { BootstrapSecret: "nope" } });
    assertEquals([bad.status, bad.text], [400, "invalid acl token"]);
    const again = await call(preset.url, "POST", "/v1/acl/bootstrap");
    assertEquals(again.status, 400);
    assertMatch(again.text, /^ACL bootstrap already done \(reset index: \d+\)$/);
    const self = await call(preset.url, "GET", "/v1/acl/token/self", { token: rootSecret });
    assertEquals((self.json as Record<string, unknown>).Type, "management");
  } finally {
    await fresh.stop();
    await preset.stop();
  }
});

eventsServerTest(
  "acl policies are validated, keep CreateIndex, show RulesJSON and emit upsert/delete events",
  async (srv) => {
    const s = await subscribe(srv.url, "topic=ACLPolicy&index=-1");
    const put = (name: string, body: unknown) =>
      call(srv.url, "PUT", `/v1/acl/policy/${name}`, { token: rootSecret, body });
    let r = await put("p1", { Name: "other", Rules: 'node { policy = "read" }' });
    assertEquals([r.status, r.text], [400, "ACL policy name does not match request path"]);
    r = await put("p1", { Name: "p1", Rules: 'node { policy = "read" ' });
    assertEquals(r.status, 400);
    assert(r.text.startsWith("policy 0 invalid: "), r.text);
    // An unknown top-level key is refused (Nomad ignores unknown keys inside a block).
    r = await put("p1", { Name: "p1", Rules: 'node { policy = "read" }\nbogus = "x"' });
    assertEquals(r.status, 400);
    r = await put("p1", { Name: "p1", Rules: 'node { policy = "admin" }' });
    assertEquals(r.status, 400);
    r = await put("p1", { Name: "p1", Description: "x".repeat(257), Rules: 'node { policy = "read" }' });
    assertEquals(r.status, 400);
    r = await put("p1", {
      name: "p1",
      rules: '{"namespace":{"default":{"policy":"read"}},"node":{"policy":"read"}}',
    });
    assertEquals([r.status, r.text], [200, ""]);
    const created = Number(r.headers.get("X-Nomad-Index"));
    r = await put("p1", { Name: "p1", Description: "d", Rules: 'namespace "default" { policy = "write" }' });
    assertEquals(r.status, 200);
    const got = await call(srv.url, "GET", "/v1/acl/policy/p1", { token: rootSecret });
    const policy = got.json as Record<string, unknown>;
    assertEquals(Object.keys(policy), [
      "Name",
      "Description",
      "Rules",
      "RulesJSON",
      "JobACL",
      "Hash",
      "CreateIndex",
      "ModifyIndex",
    ]);
    assertEquals(policy.CreateIndex, created);
    assert((policy.ModifyIndex as number) > created);
    const ns = (policy.RulesJSON as { Namespaces: Array<{ Capabilities: string[] }> }).Namespaces[0]!;
    assert(ns.Capabilities.includes("submit-job") && ns.Capabilities.includes("read-job"));
    assertEquals(got.headers.get("X-Nomad-KnownLeader"), "true");
    assertEquals(got.headers.get("X-Nomad-LastContact"), "0");
    const list = await call(srv.url, "GET", "/v1/acl/policies", { token: rootSecret });
    assertEquals((list.json as unknown[]).length, 1);
    assertEquals(Object.keys((list.json as object[])[0]!), [
      "Name",
      "Description",
      "JobACL",
      "Hash",
      "CreateIndex",
      "ModifyIndex",
    ]);
    r = await call(srv.url, "DELETE", "/v1/acl/policy/p1", { token: rootSecret });
    assertEquals(r.status, 200);
    r = await call(srv.url, "DELETE", "/v1/acl/policy/p1", { token: rootSecret });
    assertEquals(r.status, 200);
    const missing = await call(srv.url, "GET", "/v1/acl/policy/p1", { token: rootSecret });
    assertEquals([missing.status, missing.text], [404, "ACL policy not found"]);
    const types = (await s.dataUntilQuiet()).flatMap((f) => f.Events!.map((e) => e.Type));
    assertEquals(types, ["ACLPolicyUpserted", "ACLPolicyUpserted", "ACLPolicyDeleted"]);
    await s.close();
  },
);

eventsServerTest(
  "acl tokens are created, read, updated, listed and deleted with events that never carry the secret",
  async (srv) => {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    const s = await subscribe(srv.url, "topic=ACLToken&index=-1");
    const created = await call(srv.url, "POST", "/v1/acl/token", {
      token: rootSecret,
      body: { Name: "ci", Type: "client", Policies: ["nodes"], ExpirationTTL: "1h" },
    });
    assertEquals(created.status, 200);
    const token = created.json as Record<string, unknown>;
    assertEquals(Object.keys(token), [
      "AccessorID",
      "SecretID",
      "Name",
      "Type",
      "Policies",
      "Roles",
      "Global",
      "Hash",
      "CreateTime",
      "ExpirationTime",
      "ExpirationTTL",
      "CreateIndex",
      "ModifyIndex",
    ]);
    assertEquals(token.ExpirationTTL, "1h0m0s");
    const secret = String(token.SecretID);
    const accessor = String(token.AccessorID);
    const self = await call(srv.url, "GET", "/v1/acl/token/self", {
      headers: { Authorization: `Bearer ${secret}` },
    });
    assertEquals((self.json as Record<string, unknown>).AccessorID, accessor);
    const own = await call(srv.url, "GET", `/v1/acl/token/${accessor}`, { token: secret });
    assertEquals((own.json as Record<string, unknown>).SecretID, secret);
    const other = await call(srv.url, "GET", "/v1/acl/tokens", { token: secret });
    assertEquals([other.status, other.text], [403, "Permission denied"]);
    const updated = await call(srv.url, "POST", `/v1/acl/token/${accessor}`, {
      token: rootSecret,
      body: { AccessorID: accessor, Name: "ci2", Type: "client", Policies: ["nodes", "more"] },
    });
    assertEquals(updated.status, 200);
    const u = updated.json as Record<string, unknown>;
    assertEquals([u.Name, u.SecretID, u.CreateIndex, u.CreateTime], [
      "ci2",
      secret,
      token.CreateIndex,
      token.CreateTime,
    ]);
    let r = await call(srv.url, "POST", `/v1/acl/token/${accessor}`, {
      token: rootSecret,
      body: { AccessorID: crypto.randomUUID(), Type: "client", Policies: ["x"] },
    });
    assertEquals([r.status, r.text], [400, "Token Accessor ID does not match request path"]);
    const ghost = crypto.randomUUID();
    r = await call(srv.url, "POST", `/v1/acl/token/${ghost}`, {
      token: rootSecret,
      body: { Type: "management" },
    });
    assertEquals([r.status, r.text], [400, `cannot find token ${ghost}`]);
    r = await call(srv.url, "POST", `/v1/acl/token/${accessor}`, {
      token: rootSecret,
      body: { Type: "client", Policies: ["nodes"], Global: true },
    });
    assertEquals(r.status, 400);
    const list = await call(srv.url, "GET", "/v1/acl/tokens", { token: rootSecret });
    assertEquals((list.json as unknown[]).length, 2);
    assert(!("SecretID" in (list.json as object[])[0]!));
    r = await call(srv.url, "DELETE", `/v1/acl/token/${accessor}`, { token: rootSecret });
    assertEquals(r.status, 200);
    r = await call(srv.url, "DELETE", `/v1/acl/token/${accessor}`, { token: rootSecret });
    assertEquals([r.status, r.text], [400, `Cannot delete nonexistent tokens: ${accessor}`]);
    r = await call(srv.url, "GET", `/v1/acl/token/${accessor}`, { token: rootSecret });
    assertEquals([r.status, r.text], [404, "ACL token not found"]);
    r = await call(srv.url, "GET", "/v1/acl/token/self", { token: secret });
    assertEquals([r.status, r.text], [403, "ACL token not found"]);
    const frames = await s.dataUntilQuiet();
    const events = frames.flatMap((f) => f.Events!);
    assertEquals(events.map((e) => e.Type), ["ACLTokenUpserted", "ACLTokenUpserted", "ACLTokenDeleted"]);
    for (const e of events) {
      assertEquals((e.Payload as { ACLToken: { SecretID: string } }).ACLToken.SecretID, "");
    }
    assert(!s.lines.join("\n").includes(secret));
    await s.close();
  },
);

eventsServerTest("acl token creation enforces type, policies, roles and the TTL window", async (srv) => {
  const post = (body: unknown) => call(srv.url, "PUT", "/v1/acl/token", { token: rootSecret, body });
  const cases: Array<[unknown, string]> = [
    [{ Type: "client" }, "token 0 invalid: client token missing policies or roles"],
    [
      { Type: "management", Policies: ["a"] },
      "token 0 invalid: management token cannot be associated with policies or roles",
    ],
    [{ Type: "root" }, "token 0 invalid: token type must be client or management"],
    [{ Type: "client", Policies: ["a"], Roles: [{ Name: "r" }] }, "cannot find role r"],
    [
      { Type: "management", Roles: [{ Name: "r" }] },
      "token 0 invalid: management token cannot be associated with policies or roles",
    ],
    [
      { Type: "client", Policies: ["a"], ExpirationTTL: "10s" },
      "token 0 invalid: expiration time cannot be less than 1m0s in the future",
    ],
    [
      { Type: "client", Policies: ["a"], ExpirationTTL: "48h" },
      "token 0 invalid: expiration time cannot be more than 24h0m0s in the future",
    ],
  ];
  for (const [body, text] of cases) {
    const r = await post(body);
    assertEquals([r.status, r.text], [400, text], JSON.stringify(body));
  }
  const ns = await post({ Type: "management", ExpirationTTL: 3_600_000_000_000 });
  assertEquals((ns.json as Record<string, unknown>).ExpirationTTL, "1h0m0s");
  const given = { AccessorID: crypto.randomUUID(), SecretID: crypto.randomUUID() };
  const kept = await post({ Type: "management", ...given });
  const k = kept.json as Record<string, unknown>;
  assertEquals([k.AccessorID, k.SecretID], [given.AccessorID, given.SecretID]);
  const bad = await call(srv.url, "PUT", "/v1/acl/token", { token: rootSecret, body: "{nope" });
  assertEquals(bad.status, 400);
  assert(bad.text.startsWith("Failed to decode request body: "), bad.text);
  const client = await createToken(srv.url, ["a"]);
  const forbidden = await call(srv.url, "PUT", "/v1/acl/token", {
    token: client.SecretID,
    body: { Type: "management" },
  });
  assertEquals([forbidden.status, forbidden.text], [403, "Permission denied"]);
  const unknown = await call(srv.url, "GET", "/v1/acl/policies", { token: crypto.randomUUID() });
  assertEquals([unknown.status, unknown.text], [403, "ACL token not found"]);
});

Deno.test("acl token self without a token returns the anonymous token; ACLs off answer 400", async () => {
  const srv = await startEventsServer();
  const off = await startTestServer({ WHARF_ACL_ENABLED: "false", WHARF_EVENTS_HEARTBEAT_MS: "50" });
  try {
    const anon = await call(srv.url, "GET", "/v1/acl/token/self");
    const a = anon.json as Record<string, unknown>;
    assertEquals([a.AccessorID, a.Name, a.Type, a.Policies, a.SecretID], [
      "anonymous",
      "Anonymous Token",
      "client",
      ["anonymous"],
      "",
    ]);
    const disabled = await call(off.url, "GET", "/v1/acl/tokens");
    assertEquals([disabled.status, disabled.text], [400, "ACL support disabled"]);
    // With ACLs off the stream needs no token at all.
    const s = await subscribe(off.url, "", null);
    await s.close();
  } finally {
    await srv.stop();
    await off.stop();
  }
});
