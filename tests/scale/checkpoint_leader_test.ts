// One checkpoint writer at a time: two nodes, only the one holding the leadership lock writes the documents
// table; kill -9 of it hands the role to the other within seconds; a node started afterwards loads that
// checkpoint and replays the log after it.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const health = async (url: string) => await (await fetch(`${url}/health`)).json();

clusterTest(
  "only the leader writes checkpoints; kill -9 of it moves the role; a later node loads checkpoint + log",
  { env: { WHARF_CHECKPOINT_INTERVAL: "250ms" }, stopSignal: "SIGKILL" },
  async (cluster) => {
    const checkpoint = async () => {
      const [m] = await cluster.db`SELECT value, written_by FROM wharf_meta WHERE key = 'checkpoint'`;
      return { index: Number(m!.value), by: m!.written_by as string | null };
    };
    const a = await cluster.spawn("a");
    await eventually(
      "a leads",
      async () => (await health(a.url)).checkpoint_writer ? true : undefined,
      10_000,
    );
    const b = await cluster.spawn("b");
    await eventually(
      "b ticked",
      async () => (await health(b.url)).checkpoint_writer === false || undefined,
    );

    // Writes on b are checkpointed by a, and only by a, while a lives.
    const onB = new RegistryClient(b.url);
    const admin = await onB.login("admin", "admin-password-1");
    assertEquals((await onB.post("/api/v1/boxes", { name: "before" }, { token: admin })).status, 200);
    const written = (await health(b.url)).index;
    const writers = new Set<string | null>();
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      writers.add((await checkpoint()).by);
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals([...writers], ["a"]);
    assert((await checkpoint()).index >= written, "a checkpointed b's write");
    assertEquals((await health(b.url)).checkpoint_writer, false);
    assertEquals(
      (await health(b.url)).checkpoint_index >= written,
      true,
      "b reports the shared checkpoint",
    );

    const a0 = cluster.started[0]!;
    a0.kill("SIGKILL");
    await a0.status;
    const killedAt = Date.now();
    await eventually(
      "b leads",
      async () => (await health(b.url)).checkpoint_writer ? true : undefined,
      15_000,
    );
    const tookOver = Date.now() - killedAt;
    console.log(`b took over ${tookOver} ms after kill -9 of a`);
    assertEquals((await onB.post("/api/v1/boxes", { name: "after" }, { token: admin })).status, 200);
    const afterIndex = (await health(b.url)).index;
    await eventually(
      "b checkpoints",
      async () => {
        const c = await checkpoint();
        return c.by === "b" && c.index >= afterIndex ? c : undefined;
      },
      10_000,
      100,
    );
    // Commits after the checkpoint: a node started now replays them from the log.
    assertEquals((await onB.post("/api/v1/boxes", { name: "replayed" }, { token: admin })).status, 200);
    const c = await cluster.spawn("c", { WHARF_CHECKPOINT_INTERVAL: "1h" });
    const onC = new RegistryClient(c.url);
    for (const name of ["before", "after", "replayed"]) {
      const box = await onC.get(`/api/v1/box/admin/${name}`, { token: admin });
      assertEquals(box.status, 200, `${name} on c: ${box.text}`);
    }
    assertEquals((await health(c.url)).index, (await health(b.url)).index);
  },
);
