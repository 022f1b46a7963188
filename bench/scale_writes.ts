// Durable writes per second on PostgreSQL: concurrent commits through wharf's store against a raw INSERT + COMMIT
// loop on the same database (same connections), and the lag of a second node's view (p50/p99).
// Run: deno run -A bench/scale_writes.ts (needs Debian's postgresql; starts its own server).

import postgres from "postgres";
import { DataDir } from "../lib/store/mod.ts";
import { startPostgres } from "../tests/fixtures/postgres.ts";

const commits = Number(Deno.env.get("BENCH_COMMITS") ?? 2000);
const concurrency = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 16);
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(1)));

async function pool(n: number, width: number, task: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await task(next++);
  }));
  return (performance.now() - started) / 1000;
}

const pg = await startPostgres();
const dirs: string[] = [];
try {
  const url = await pg.createDatabase();
  const raw = postgres(url, { max: 10, onnotice: () => {} });
  await raw`CREATE TABLE raw_log (idx bigserial PRIMARY KEY, line text NOT NULL)`;
  const line = JSON.stringify({
    Events: [{ Topic: "Node", Type: "NodeRegistration", Key: "n", Payload: {} }],
  });
  const rawSeconds = await pool(commits, concurrency, async () => {
    await raw.begin(async (tx) => void await tx`INSERT INTO raw_log (line) VALUES (${line})`);
  });
  await raw.end();

  const open = async () => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-bench-" });
    dirs.push(dir);
    return await DataDir.open(dir, { databaseUrl: url, rootKey, checkpointMs: 60_000 });
  };
  const writer = await open();
  const reader = await open();
  const committedAt = new Map<number, number>();
  const lags: number[] = [];
  reader.log.subscribe((b) => {
    const at = committedAt.get(b.index);
    if (at !== undefined) lags.push(performance.now() - at);
  });
  const wharfSeconds = await pool(commits, concurrency, async (i) => {
    const { index } = await writer.store.transact([`test/bench/${i % 64}`], () => ({
      events: [{ Topic: "Node", Type: "NodeRegistration", Key: `n${i}`, Payload: {} }],
    }));
    committedAt.set(index, performance.now());
  });
  await new Promise((r) => setTimeout(r, 1500));
  lags.sort((a, b) => a - b);
  const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor(lags.length * p))]?.toFixed(1);
  const rawRate = commits / rawSeconds;
  const wharfRate = commits / wharfSeconds;
  console.log(
    `raw INSERT+COMMIT: ${rawRate.toFixed(0)}/s; wharf commits: ${wharfRate.toFixed(0)}/s; ratio ${
      (wharfRate / rawRate).toFixed(2)
    } (${commits} commits, ${concurrency} concurrent)`,
  );
  console.log(
    `second node's view lag after the writer's answer: p50 ${pct(0.5)} ms, p99 ${
      pct(0.99)
    } ms (${lags.length} samples)`,
  );
  await writer.close();
  await reader.close();
} finally {
  for (const d of dirs) await Deno.remove(d, { recursive: true });
  await pg.stop();
}
