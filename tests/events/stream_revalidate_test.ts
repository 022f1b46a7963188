// Event streams end when their token stops granting access (deleted, narrowed, expired) or the server stops.

import { assert, assertEquals } from "../helpers/assert.ts";
import { withTimeout } from "../helpers/server.ts";
import {
  call,
  createToken,
  eventsServerTest,
  nodeEvent,
  publish,
  putPolicy,
  rootSecret,
  startEventsServer,
  subscribe,
} from "./stream_helpers.ts";

eventsServerTest(
  "event stream ends cleanly after a complete line when the subscriber's token is deleted",
  async (srv) => {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    const token = await createToken(srv.url, ["nodes"]);
    const s = await subscribe(srv.url, "topic=Node", token.SecretID);
    const before = await publish(srv.url, [nodeEvent("n1")]);
    assertEquals((await s.nextData())!.Index, before);
    const del = await call(srv.url, "DELETE", `/v1/acl/token/${token.AccessorID}`, { token: rootSecret });
    assertEquals(del.status, 200);
    const revoking = Number(del.headers.get("X-Nomad-Index"));
    await publish(srv.url, [nodeEvent("n2")]).catch(() => {});
    const rest = await s.readToEnd(5000);
    assert(rest.every((f) => f.Index! < revoking), "no frame at or above the revoking index");
    assert(s.done);
  },
);

eventsServerTest(
  "event stream ends when the subscriber's token is updated to policies that no longer grant access",
  async (srv) => {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    await putPolicy(srv.url, "jobs", 'namespace "default" { policy = "read" }');
    const token = await createToken(srv.url, ["nodes"]);
    const s = await subscribe(srv.url, "topic=Node", token.SecretID);
    const kept = await call(srv.url, "POST", `/v1/acl/token/${token.AccessorID}`, {
      token: rootSecret,
      body: { Name: "renamed", Type: "client", Policies: ["nodes", "jobs"] },
    });
    assertEquals(kept.status, 200);
    const index = await publish(srv.url, [nodeEvent("still-allowed")]);
    assertEquals((await s.nextData())!.Index, index);
    const narrowed = await call(srv.url, "POST", `/v1/acl/token/${token.AccessorID}`, {
      token: rootSecret,
      body: { Name: "renamed", Type: "client", Policies: ["jobs"] },
    });
    assertEquals(narrowed.status, 200);
    const revoking = Number(narrowed.headers.get("X-Nomad-Index"));
    const rest = await s.readToEnd(5000);
    assert(rest.every((f) => f.Index! < revoking));
    assert(s.done);
  },
);

eventsServerTest(
  "event stream closes when the granting policy is deleted while other streams go on",
  async (srv) => {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    await putPolicy(srv.url, "nodes2", 'node { policy = "read" }');
    const a = await createToken(srv.url, ["nodes"]);
    const b = await createToken(srv.url, ["nodes2"]);
    const sa = await subscribe(srv.url, "topic=Node", a.SecretID);
    const sb = await subscribe(srv.url, "topic=Node", b.SecretID);
    const del = await call(srv.url, "DELETE", "/v1/acl/policy/nodes", { token: rootSecret });
    assertEquals(del.status, 200);
    const revoking = Number(del.headers.get("X-Nomad-Index"));
    const rest = await sa.readToEnd(5000);
    assert(rest.every((f) => f.Index! < revoking));
    const index = await publish(srv.url, [nodeEvent("n1")]);
    assertEquals((await sb.nextData())!.Index, index);
    // Weakening a policy also ends the streams it no longer covers.
    await putPolicy(srv.url, "nodes2", 'namespace "default" { policy = "read" }');
    await sb.readToEnd(5000);
    assert(sb.done);
  },
);

eventsServerTest("event stream of an expiring token closes within a heartbeat interval of expiry", {
  WHARF_ACL_TOKEN_MIN_TTL: "100ms",
}, async (srv) => {
  await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
  const created = Date.now();
  const token = await createToken(srv.url, ["nodes"], { ExpirationTTL: "1500ms" });
  const s = await subscribe(srv.url, "topic=Node", token.SecretID);
  await s.readToEnd(10_000);
  assert(s.done);
  assert(Date.now() - created >= 1450, "not before expiry");
  const after = await call(srv.url, "GET", "/v1/acl/token/self", { token: token.SecretID });
  assertEquals([after.status, after.text], [403, "ACL token expired"]);
});

Deno.test("event streams end cleanly when the server shuts down", async () => {
  const srv = await startEventsServer();
  let stopped = false;
  try {
    const streams = await Promise.all([subscribe(srv.url, ""), subscribe(srv.url, "topic=Node&index=0")]);
    await publish(srv.url, [nodeEvent("n1")]);
    const stopping = srv.stop();
    for (const s of streams) {
      await withTimeout(s.readToEnd(10_000), 10_000, "stream did not end at shutdown");
      assert(s.done);
    }
    await stopping;
    stopped = true;
  } finally {
    if (!stopped) await srv.stop();
  }
});
