// Registry reads on a PostgreSQL node against the same node on the embedded store: both seeded with the same
// boxes through the API, then GET box JSON and metadata under wrk, alternating, in the same run (issue #14
// asks for ≥ 0.9×: both are served from memory).
// Run: deno run -A bench/scale_reads.ts (needs Debian's postgresql and wrk; starts its own server).

import { cpuCount, hasCommand, median, runWrk, type WrkResult } from "./lib.ts";
import { boxName, seedBoxes } from "./registry_seed.ts";
import { type BenchRegistry, startBenchRegistry } from "./registry_server.ts";
import { startPostgres } from "../tests/fixtures/postgres.ts";

const boxCount = Number(Deno.env.get("BENCH_REGISTRY_BOXES") ?? 2000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

/** Pins every thread of a server to `cpus` (taskset -a), so wrk on the other CPU never competes with it. */
async function pin(registry: BenchRegistry, cpus: string): Promise<void> {
  const out = await new Deno.Command("taskset", {
    args: ["-a", "-p", "-c", cpus, String(registry.server.process.pid)],
    stdout: "null",
  }).output();
  if (!out.success) throw new Error("taskset could not pin a wharf server");
}

/** Waits until a node's checkpoint covers its log (GET /health), at most `limitMs`. */
async function settleCheckpoint(url: string, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const health = await (await fetch(`${url}/health`)).json();
    if (health.checkpoint_index >= health.index) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url}: the checkpoint did not catch up within ${limitMs} ms`);
}

if (!hasCommand("wrk")) throw new Error("wrk is not installed");
const pg = await startPostgres();
const servers: BenchRegistry[] = [];
try {
  const embedded = await startBenchRegistry();
  servers.push(embedded);
  const clustered = await startBenchRegistry({
    WHARF_DATABASE_URL: await pg.createDatabase(),
    WHARF_ROOT_KEY: rootKey,
  });
  servers.push(clustered);
  for (const s of servers) await seedBoxes(s.api, s.token, "alice", boxCount, 32);
  // Steady state: each node has checkpointed what the seed wrote before anything is measured.
  for (const s of servers) await settleCheckpoint(s.server.url);

  const pinned = hasCommand("taskset") && cpuCount() >= 2;
  const serverCpus = String(cpuCount() - 1);
  const clientCpus = cpuCount() === 2 ? "0" : `0-${cpuCount() - 2}`;
  if (pinned) { for (const s of servers) await pin(s, serverCpus); }
  const threads = pinned ? Math.max(1, cpuCount() - 1) : 2;
  const wrk = (url: string, secs: number) =>
    runWrk(url, { seconds: secs, connections: 50, threads, ...(pinned ? { cpus: clientCpus } : {}) });

  const sample = boxName(Math.floor(boxCount / 2));
  const targets = [
    { name: "GET /api/v1/box/:u/:b", path: `/api/v1/box/alice/${sample}` },
    { name: "GET /:u/:b (metadata)", path: `/alice/${sample}` },
  ];
  console.log(`# Registry reads: PostgreSQL node vs embedded node, ${boxCount} boxes each`);
  console.log(`# ${new Date().toISOString()}, deno ${Deno.version.deno}, ${rounds} rounds of ${seconds} s\n`);
  for (const t of targets) {
    const a = await (await fetch(`${embedded.server.url}${t.path}`)).text();
    const b = await (await fetch(`${clustered.server.url}${t.path}`)).text();
    // Same data, same answer (only the seeds' timestamps and the servers' ports differ).
    const shape = (s: string) =>
      s.replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"T"').replace(/http:\/\/127\.0\.0\.1:\d+/g, "HOST");
    if (shape(a) !== shape(b)) throw new Error(`${t.path}: the two nodes answer differently`);
    await wrk(`${embedded.server.url}${t.path}`, 1);
    await wrk(`${clustered.server.url}${t.path}`, 1);
    const onFile: WrkResult[] = [];
    const onPg: WrkResult[] = [];
    for (let round = 0; round < rounds; round++) {
      const runFile = async () => onFile.push(await wrk(`${embedded.server.url}${t.path}`, seconds));
      const runPg = async () => onPg.push(await wrk(`${clustered.server.url}${t.path}`, seconds));
      if (round % 2 === 0) await runFile().then(runPg);
      else await runPg().then(runFile);
    }
    const ratios = onPg.map((r, i) => r.requestsPerSec / onFile[i]!.requestsPerSec);
    console.log(
      `${t.name}: PostgreSQL node ${median(onPg.map((r) => r.requestsPerSec)).toFixed(0)} req/s ` +
        `(p99 ${median(onPg.map((r) => r.p99ms)).toFixed(2)} ms), embedded ${
          median(onFile.map((r) => r.requestsPerSec)).toFixed(0)
        } req/s (p99 ${median(onFile.map((r) => r.p99ms)).toFixed(2)} ms): ratio ${
          median(ratios).toFixed(2)
        }× (rounds ${ratios.map((r) => r.toFixed(2)).join(", ")}; target ≥ 0.9×)`,
    );
  }
  console.log(
    `\n${
      pinned ? `servers pinned to CPU ${serverCpus}, wrk to CPU ${clientCpus}` : "unpinned"
    }; load average ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
  );
} finally {
  for (const s of servers) await s.close();
  await pg.stop();
}
