// Node producers seen through the event stream and guarded by ACLs.

import { assert, assertEquals } from "../helpers/assert.ts";
import type { TestServer } from "../helpers/server.ts";
import {
  call,
  createToken,
  eventsServerTest,
  type Frame,
  putPolicy,
  rootSecret,
  withSubscription,
} from "./stream_helpers.ts";

async function nodeWrite(ts: TestServer, method: string, path: string, body?: unknown, token = rootSecret) {
  const r = await call(ts.url, method, path, { token, body });
  assertEquals(r.status, 200, `${method} ${path}: ${r.text}`);
  return (r.json as { Index: number }).Index;
}

const events = (f: Frame | undefined) => f?.Events ?? [];
const payloadNode = (e: Record<string, unknown>) => (e.Payload as { Node: Record<string, unknown> }).Node;

eventsServerTest(
  "a node registered after the first {} streams as Node/NodeRegistration",
  async (ts) => {
    await withSubscription(ts.url, "topic=Node", async (s) => {
      const index = await nodeWrite(ts, "PUT", "/v1/node/register", { ID: "n1", SecretID: "hidden" });
      const frame = await s.nextData();
      assertEquals(frame?.Index, index);
      const [e] = events(frame);
      assertEquals(events(frame).length, 1);
      assertEquals(Object.keys(e!), ["Topic", "Type", "Key", "Namespace", "FilterKeys", "Index", "Payload"]);
      assertEquals([e!.Topic, e!.Type, e!.Key, e!.Namespace, e!.FilterKeys, e!.Index], [
        "Node",
        "NodeRegistration",
        "n1",
        "",
        null,
        index,
      ]);
      assertEquals(Object.keys(e!.Payload as object), ["Node"]);
      const node = payloadNode(e!);
      assertEquals([node.Status, node.SchedulingEligibility, node.SecretID, node.Drain], [
        "initializing",
        "eligible",
        "",
        false,
      ]);
      assertEquals([node.CreateIndex, node.ModifyIndex], [index, index]);
    });
  },
);

eventsServerTest(
  "drain, eligibility and purge stream their Node events; unchanged eligibility streams none",
  async (ts) => {
    await nodeWrite(ts, "PUT", "/v1/node/register", { ID: "n1" });
    await withSubscription(ts.url, "topic=Node&index=-1", async (s) => {
      const drainIndex = await nodeWrite(ts, "POST", "/v1/node/n1/drain", { DrainSpec: { Deadline: 60e9 } });
      const drain = events(await s.nextData());
      assertEquals(drain.map((e) => [e.Type, e.Index]), [["NodeDrain", drainIndex]]);
      const drained = payloadNode(drain[0]!);
      assert(drained.DrainStrategy !== null);
      assertEquals(drained.Drain, true);
      const lastEvent = (drained.Events as Array<Record<string, unknown>>).at(-1)!;
      assertEquals([lastEvent.Subsystem, lastEvent.Message, lastEvent.CreateIndex], [
        "Drain",
        "Node drain strategy set",
        drainIndex,
      ]);

      await nodeWrite(ts, "POST", "/v1/node/n1/drain", { DrainSpec: null });
      assertEquals(events(await s.nextData()).map((e) => e.Type), ["NodeDrain"]);
      const same = await call(ts.url, "PUT", "/v1/node/n1/eligibility", {
        token: rootSecret,
        body: { Eligibility: "ineligible" },
      });
      assertEquals(same.status, 200);
      const eligIndex = await nodeWrite(ts, "PUT", "/v1/node/n1/eligibility", { Eligibility: "eligible" });
      // The unchanged request committed nothing, so the next frame is the real change.
      const elig = await s.nextData();
      assertEquals([elig?.Index, events(elig).map((e) => e.Type)], [eligIndex, ["NodeEligibility"]]);
      assertEquals(payloadNode(events(elig)[0]!).SchedulingEligibility, "eligible");

      const purgeIndex = await nodeWrite(ts, "POST", "/v1/node/n1/purge");
      const purge = events(await s.nextData());
      assertEquals(purge.map((e) => [e.Type, e.Key, e.Index]), [["NodeDeregistration", "n1", purgeIndex]]);
      assertEquals(payloadNode(purge[0]!).ModifyIndex, eligIndex);
      const gone = await call(ts.url, "GET", "/v1/node/n1", { token: rootSecret });
      assertEquals([gone.status, gone.text], [404, "node not found"]);
    });
  },
);

eventsServerTest(
  "a NodeDrain subscriber gets drain and eligibility events as Topic Node, not registrations",
  async (ts) => {
    await withSubscription(ts.url, "topic=NodeDrain&index=-1", async (s) => {
      await nodeWrite(ts, "PUT", "/v1/node/register", { ID: "n1" });
      await nodeWrite(ts, "PUT", "/v1/node/n1/drain", { DrainSpec: { Deadline: 0 } });
      await nodeWrite(ts, "PUT", "/v1/node/register", { ID: "n2" });
      await nodeWrite(ts, "PUT", "/v1/node/n2/eligibility", { Eligibility: "ineligible" });
      await nodeWrite(ts, "POST", "/v1/node/n2/purge");
      const frames = await s.dataUntilQuiet(500);
      const seen = frames.flatMap((f) => events(f)).map((e) => [e.Topic, e.Type, e.Key]);
      assertEquals(seen, [["Node", "NodeDrain", "n1"], ["Node", "NodeEligibility", "n2"]]);
    });
  },
);

eventsServerTest("node endpoints need node write for writes and node read for reads", async (ts) => {
  await putPolicy(ts.url, "node-read", `node { policy = "read" }`);
  await putPolicy(ts.url, "node-write", `node { policy = "write" }`);
  await putPolicy(ts.url, "jobs", `namespace "*" { policy = "write" }`);
  const reader = await createToken(ts.url, ["node-read"]);
  const writer = await createToken(ts.url, ["node-write"]);
  const jobsOnly = await createToken(ts.url, ["jobs"]);

  for (const token of [undefined, reader.SecretID, jobsOnly.SecretID]) {
    const r = await call(ts.url, "PUT", "/v1/node/register", { token, body: { ID: "n1" } });
    assertEquals([r.status, r.text], [403, "Permission denied"]);
  }
  const unknown = await call(ts.url, "PUT", "/v1/node/register", {
    token: crypto.randomUUID(),
    body: { ID: "n1" },
  });
  assertEquals([unknown.status, unknown.text], [403, "ACL token not found"]);

  await nodeWrite(ts, "PUT", "/v1/node/register", { ID: "n1" }, writer.SecretID);
  const drained = await call(ts.url, "PUT", "/v1/node/n1/drain", {
    token: writer.SecretID,
    body: { DrainSpec: { Deadline: 0 } },
  });
  assertEquals(drained.status, 200);
  const node = (await call(ts.url, "GET", "/v1/node/n1", { token: reader.SecretID })).json as Record<
    string,
    unknown
  >;
  assertEquals((node.LastDrain as Record<string, unknown>).AccessorID, writer.AccessorID);

  for (const path of ["/v1/nodes", "/v1/node/n1"]) {
    assertEquals((await call(ts.url, "GET", path, { token: reader.SecretID })).status, 200);
    assertEquals((await call(ts.url, "GET", path, { token: writer.SecretID })).status, 200);
    const denied = await call(ts.url, "GET", path, { token: jobsOnly.SecretID });
    assertEquals([denied.status, denied.text], [403, "Permission denied"]);
  }
  for (const path of ["/v1/node/n1/eligibility", "/v1/node/n1/drain", "/v1/node/n1/purge"]) {
    const r = await call(ts.url, "POST", path, { token: reader.SecretID, body: {} });
    assertEquals([r.status, r.text], [403, "Permission denied"], path);
  }
});
