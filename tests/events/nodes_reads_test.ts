// Node reads and storage: ID rules across a restart, list prefix and order, ComputedClass stability.

import { assert, assertEquals } from "../helpers/assert.ts";
import { call } from "./stream_helpers.ts";
import { getNode, register, withServer } from "./nodes_support.ts";

withServer("long and dotted node IDs are stored and survive a restart", async (ts) => {
  const ids = ["a".repeat(100), "x..y:" + "b".repeat(95)];
  for (const id of ids) await register(ts, { ID: id });
  const restarted = await ts.restart();
  try {
    for (const id of ids) assertEquals((await getNode(restarted, id)).ID, id);
    const next = await register(restarted, { ID: "after" });
    assert(next > ((await getNode(restarted, ids[1]!)).ModifyIndex as number));
  } finally {
    await restarted.stop({ keepData: true });
  }
});

withServer("node list filters by ID prefix and sorts by ID", async (ts) => {
  for (const id of ["bb-2", "aa-1", "bb-1"]) await register(ts, { ID: id });
  const all = (await call(ts.url, "GET", "/v1/nodes")).json as Array<{ ID: string }>;
  assertEquals(all.map((n) => n.ID), ["aa-1", "bb-1", "bb-2"]);
  const bb = (await call(ts.url, "GET", "/v1/nodes?prefix=bb")).json as Array<{ ID: string }>;
  assertEquals(bb.map((n) => n.ID), ["bb-1", "bb-2"]);
});

withServer("ComputedClass is stable across identical nodes and ignores unique attributes", async (ts) => {
  await register(ts, {
    ID: "a",
    NodeClass: "gpu",
    Attributes: { "unique.hostname": "a", "kernel.name": "linux" },
  });
  await register(ts, {
    ID: "b",
    NodeClass: "gpu",
    Attributes: { "unique.hostname": "b", "kernel.name": "linux" },
  });
  await register(ts, { ID: "c", NodeClass: "cpu", Attributes: { "kernel.name": "linux" } });
  const [a, b, c] = [await getNode(ts, "a"), await getNode(ts, "b"), await getNode(ts, "c")];
  assertEquals(a.ComputedClass, b.ComputedClass);
  assert(a.ComputedClass !== c.ComputedClass);
});
