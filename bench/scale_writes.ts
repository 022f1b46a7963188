// Durable writes per second on PostgreSQL (fsync on, PostgreSQL's defaults): concurrent commits through wharf's
// store (event publishes, and registry writes as routes/registry/state.ts makes them) against a raw INSERT +
// COMMIT loop on the same database with the same number of concurrent clients, and the lag of a second node's
// view after the writer's answer (p50/p99).
// Run: deno run -A bench/scale_writes.ts (needs Debian's postgresql; starts its own server).
// BENCH_COMMITS (per workload, default 1000), BENCH_CONCURRENCY (a comma list, default 1,16,64;
// 1 client runs a quarter of the commits), BENCH_ROUNDS (2),
// BENCH_FSYNC=off for the old fsync-off setting.

import postgres from "postgres";
import { DataDir } from "../lib/store/mod.ts";
import { startPostgres } from "../tests/fixtures/postgres.ts";

const commits = Number(Deno.env.get("BENCH_COMMITS") ?? 1000);
const widths = (Deno.env.get("BENCH_CONCURRENCY") ?? "1,16,64").split(",").map(Number);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2);
const durable = Deno.env.get("BENCH_FSYNC") !== "off";
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(1)));

async function pool(n: number, width: number, task: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await task(next++);
  }));
  return (performance.now() - started) / 1000;
}

const eventOf = (i: number) => ({
  Topic: "Node",
  Type: "NodeRegistration",
  Key: `node-${i}`,
  Namespace: "default",
  Payload: { Node: { ID: crypto.randomUUID(), Name: `node-${i}`, Datacenter: "dc1", Status: "ready" } },
});

const boxOf = (i: number) => ({
  id: crypto.randomUUID(),
  owner: "u-bench",
  name: `box-${i}`,
  short_description: "A box created by bench/scale_writes.ts",
  description_markdown: "Lorem ipsum dolor sit amet, ".repeat(8),
  private: false,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
  downloads: 0,
});

const pg = await startPostgres({ durable });
const dirs: string[] = [];
try {
  const url = await pg.createDatabase();
  const open = async () => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-bench-" });
    dirs.push(dir);
    return await DataDir.open(dir, { databaseUrl: url, rootKey, checkpointMs: 60_000 });
  };
  const writer = await open();
  const reader = await open();
  // When the writer answered and when the second node applied each Index (it may apply one before the answer).
  const committedAt = new Map<number, number>();
  const seenAt = new Map<number, number>();
  reader.log.subscribe((b) => void seenAt.set(b.index, performance.now()));
  const grouping = () => (writer.log as { commitStats?: { batches: number; members: number } }).commitStats;

  const raw = postgres(url, { max: Math.max(...widths), onnotice: () => {} });
  await raw`CREATE TABLE raw_log (idx bigserial PRIMARY KEY, line text NOT NULL)`;
  const line = JSON.stringify({ Index: 1, Events: [{ ...eventOf(1), Index: 1 }] });
  const runs = (width: number) => width === 1 ? Math.ceil(commits / 4) : commits;
  const rawRun = (width: number) =>
    pool(runs(width), width, async () => {
      await raw.begin(async (tx) => void await tx`INSERT INTO raw_log (line) VALUES (${line})`);
    });

  const publishes = (width: number) =>
    pool(runs(width), width, async (i) => {
      // As routes/events/publish.ts commits an event (no lock key).
      const { index } = await writer.store.transact([], () => ({ events: [eventOf(i)] }));
      committedAt.set(index, performance.now());
    });
  let boxes = 0;
  const registryWrites = (width: number) =>
    pool(runs(width), width, async () => {
      // As routes/registry/state.ts write() commits: every registry mutation under the one registry lock.
      const box = boxOf(++boxes);
      const { index } = await writer.store.transact(["registry/write"], () => ({
        writes: [{ collection: "registry/boxes", id: box.id, doc: box }],
        events: [{ Topic: "Box", Type: "BoxCreated", Key: box.name, Payload: { id: box.id } }],
      }));
      committedAt.set(index, performance.now());
    });

  console.log(
    `PostgreSQL ${
      durable ? "fsync on (defaults)" : "fsync off"
    }; ${commits} commits per run; ${rounds} rounds`,
  );
  for (let round = 1; round <= rounds; round++) {
    for (const width of widths) {
      const n = runs(width);
      const rawRate = n / await rawRun(width);
      const before = grouping();
      const publishRate = n / await publishes(width);
      const after = grouping();
      const registryRate = n / await registryWrites(width);
      const grouped = before && after
        ? `; publishes grouped ${
          ((after.members - before.members) / Math.max(1, after.batches - before.batches)).toFixed(1)
        } per COMMIT`
        : "";
      console.log(
        `round ${round}, ${width} clients: raw INSERT+COMMIT ${rawRate.toFixed(0)}/s; wharf event publishes ${
          publishRate.toFixed(0)
        }/s (${(publishRate / rawRate).toFixed(2)}x); registry writes ${registryRate.toFixed(0)}/s (${
          (registryRate / rawRate).toFixed(2)
        }x)${grouped}`,
      );
    }
  }
  await raw.end();
  await new Promise((r) => setTimeout(r, 1500));
  const lags = [...committedAt].map(([index, at]) => (seenAt.get(index) ?? Infinity) - at).sort((a, b) =>
    a - b
  );
  const early = lags.filter((l) => l <= 0).length;
  const pct = (p: number) =>
    Math.max(0, lags[Math.min(lags.length - 1, Math.floor(lags.length * p))]!).toFixed(1);
  console.log(
    `second node's view lag after the writer's answer: p50 ${pct(0.5)} ms, p99 ${
      pct(0.99)
    } ms (${lags.length} commits, ${early} applied there before the writer's answer counted as 0)`,
  );
  await writer.close();
  await reader.close();
} finally {
  for (const d of dirs) await Deno.remove(d, { recursive: true });
  await pg.stop();
}
