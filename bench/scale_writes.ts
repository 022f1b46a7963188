// Durable writes per second on PostgreSQL (fsync on, PostgreSQL's defaults): concurrent commits through wharf's
// store (event publishes; registry writes with the lock keys routes/registry/core/locks.ts gives a box write, spread
// over many namespaces; and the same writes under the old single registry key) against a raw INSERT + COMMIT
// loop on the same database with the same number of concurrent clients, and the lag of a second node's view
// after the writer's answer (p50/p99).
// Run: deno run -A bench/scale_writes.ts (needs Debian's postgresql; starts its own server).
// BENCH_COMMITS (per workload, default 1000), BENCH_CONCURRENCY (a comma list, default 1,16,64;
// 1 client runs a quarter of the commits), BENCH_ROUNDS (2), BENCH_SLICES (5),
// BENCH_FSYNC=off for the old fsync-off setting, BENCH_NAMESPACES (namespaces the registry writes spread over,
// default 256).

import postgres from "postgres";
import { DataDir } from "../lib/store/mod.ts";
import { startPostgres } from "../tests/fixtures/postgres.ts";
import { registryLock, registryLockSet } from "../routes/registry/core/locks.ts";

const commits = Number(Deno.env.get("BENCH_COMMITS") ?? 1000);
const widths = (Deno.env.get("BENCH_CONCURRENCY") ?? "1,16,64").split(",").map(Number);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2);
const durable = Deno.env.get("BENCH_FSYNC") !== "off";
const slices = Number(Deno.env.get("BENCH_SLICES") ?? 5);
const namespaces = Number(Deno.env.get("BENCH_NAMESPACES") ?? 256);
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
  owner: `u-bench-${i % namespaces}`,
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
  const rawRun = (n: number, width: number) =>
    pool(n, width, async () => {
      await raw.begin(async (tx) => void await tx`INSERT INTO raw_log (line) VALUES (${line})`);
    });
  // When each commit's request started (for the lag from the start of the request too).
  const startedAt = new Map<number, number>();
  const timed = async (commit: () => Promise<{ index: number }>) => {
    const started = performance.now();
    const { index } = await commit();
    committedAt.set(index, performance.now());
    startedAt.set(index, started);
  };
  const publishes = (n: number, width: number) =>
    pool(n, width, async (i) => {
      // As routes/events/publish.ts commits an event (no lock key).
      await timed(() => writer.store.transact([], () => ({ events: [eventOf(i)] })));
    });
  let boxes = 0;
  /** Box writes; `scoped`: as Registry.writeIn commits one (registry/write shared, the namespace's key). */
  const registryWrites = (scoped: boolean) => (n: number, width: number) =>
    pool(n, width, async () => {
      const box = boxOf(++boxes);
      const { locks, sharedLocks } = scoped
        ? registryLockSet([registryLock.namespace(box.owner)])
        : { locks: ["registry/write"], sharedLocks: [] }; // before: every registry write under one key
      await timed(() =>
        writer.store.transact(locks, () => ({
          writes: [{ collection: "registry/boxes", id: box.id, doc: box }],
          events: [{ Topic: "Box", Type: "BoxCreated", Key: box.name, Payload: { id: box.id } }],
        }), { sharedLocks })
      );
    });

  console.log(
    `PostgreSQL ${
      durable ? "fsync on (defaults)" : "fsync off"
    }; ${commits} commits per workload and round ` +
      `(a quarter with 1 client), in ${slices} interleaved slices; ${rounds} rounds; ` +
      `registry writes over ${namespaces} namespaces`,
  );
  for (let round = 1; round <= rounds; round++) {
    for (const width of widths) {
      // The disk is shared: the three workloads take turns in slices, so a slow minute hits them alike.
      const n = Math.ceil(runs(width) / slices);
      const seconds = { raw: 0, publish: 0, registry: 0, single: 0 };
      let grouped = { batches: 0, members: 0 };
      for (let slice = 0; slice < slices; slice++) {
        seconds.raw += await rawRun(n, width);
        const before = grouping();
        seconds.publish += await publishes(n, width);
        const after = grouping();
        if (before && after) {
          grouped = {
            batches: grouped.batches + after.batches - before.batches,
            members: grouped.members + after.members - before.members,
          };
        }
        // The registry's keys and the old single key take turns going first.
        if (slice % 2 === 0) {
          seconds.registry += await registryWrites(true)(n, width);
          seconds.single += await registryWrites(false)(n, width);
        } else {
          seconds.single += await registryWrites(false)(n, width);
          seconds.registry += await registryWrites(true)(n, width);
        }
      }
      const total = n * slices;
      const [rawRate, publishRate, registryRate, singleRate] = [
        seconds.raw,
        seconds.publish,
        seconds.registry,
        seconds.single,
      ].map((s) => total / s) as [number, number, number, number];
      const groupedText = grouped.batches
        ? `; publishes grouped ${(grouped.members / grouped.batches).toFixed(1)} per COMMIT`
        : "";
      console.log(
        `round ${round}, ${width} clients: raw INSERT+COMMIT ${rawRate.toFixed(0)}/s; wharf event publishes ${
          publishRate.toFixed(0)
        }/s (${(publishRate / rawRate).toFixed(2)}x); registry writes ${registryRate.toFixed(0)}/s (${
          (registryRate / rawRate).toFixed(2)
        }x), under the old single key ${singleRate.toFixed(0)}/s (${(singleRate / rawRate).toFixed(2)}x); ` +
          `registry keys / single key ${(registryRate / singleRate).toFixed(2)}x${groupedText}`,
      );
    }
  }
  await raw.end();
  await new Promise((r) => setTimeout(r, 1500));
  const percentiles = (from: Map<number, number>) => {
    const lags = [...from].map(([index, at]) => Math.max(0, (seenAt.get(index) ?? Infinity) - at)).sort((
      a,
      b,
    ) => a - b);
    const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor(lags.length * p))]!.toFixed(1);
    return `p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`;
  };
  const early = [...committedAt].filter(([index, at]) => (seenAt.get(index) ?? Infinity) <= at).length;
  console.log(
    `second node's view after the writer's answer: ${
      percentiles(committedAt)
    } (${committedAt.size} commits; ${early} ` +
      `were applied there before the answer, counted as 0); after the request started: ${
        percentiles(startedAt)
      }`,
  );
  await writer.close();
  await reader.close();
} finally {
  for (const d of dirs) await Deno.remove(d, { recursive: true });
  await pg.stop();
}
