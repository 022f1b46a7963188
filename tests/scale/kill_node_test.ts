// A node killed with kill -9 under write load loses no acknowledged write: every commit it answered is in the
// shared log, and the other node goes on serving and streams it.

import { assert, assertEquals } from "../helpers/assert.ts";
import type { ChildServer } from "../helpers/server.ts";
import { nodeEvent, rootSecret, subscribe } from "../events/stream_helpers.ts";
import { clusterTest, indexesUntil } from "./helpers.ts";

clusterTest(
  "kill -9 of a node under write load: every acknowledged write is on the surviving node",
  { stopSignal: "SIGKILL" },
  async (cluster) => {
    for (const name of ["victim", "survivor"]) await cluster.spawn(name);
    const [victim, survivor] = cluster.started as [ChildServer, ChildServer];
    const acknowledged: number[] = [];
    let attempted = 0;
    const writer = async (i: number) => {
      while (true) {
        attempted++;
        try {
          const r = await fetch(`${victim.url}/v1/event/publish`, {
            method: "POST",
            headers: { "X-Nomad-Token": rootSecret },
            body: JSON.stringify({ Events: [nodeEvent(`w${i}-${attempted}`)] }),
          });
          if (r.status !== 200) return;
          acknowledged.push((await r.json()).Index);
        } catch {
          return; // the node is gone
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, i) => writer(i));
    while (acknowledged.length < 100) await new Promise((r) => setTimeout(r, 20));
    victim.kill("SIGKILL");
    await victim.status;
    await Promise.all(writers);
    assert(acknowledged.length >= 100);
    // Every acknowledged index is on the survivor, in one increasing sequence; it still takes writes.
    const after = await fetch(`${survivor.url}/v1/event/publish`, {
      method: "POST",
      headers: { "X-Nomad-Token": rootSecret },
      body: JSON.stringify({ Events: [nodeEvent("after")] }),
    });
    assertEquals(after.status, 200);
    const last = (await after.json()).Index as number;
    const seen = await indexesUntil(await subscribe(survivor.url, "index=1&topic=Node"), last);
    const present = new Set(seen);
    const lost = acknowledged.filter((i) => !present.has(i));
    assertEquals(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes missing`);
    for (let i = 1; i < seen.length; i++) assert(seen[i]! > seen[i - 1]!, "strictly increasing");
  },
);
