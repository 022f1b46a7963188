// Before/after in one run: this checkout against an earlier revision (BENCH_BEFORE, a git revision; the scenario
// is skipped without it), both seeded the same way and pinned to the same CPU, wrk alternating between them.
// Figures: seeding writes/s (the write path: 4 API writes per box, 64 in flight), box JSON and metadata req/s,
// and the server's CPU per request (µs), which a busy machine moves much less than req/s.

import { cpuSecondsOf, type Figure, hasCommand, median, pinServer, runWrk, type WrkResult } from "../lib.ts";
import { boxName, seedBoxes } from "../registry_seed.ts";
import { type BenchRegistry, startBenchRegistry } from "../registry_server.ts";
import { checkout } from "../git_checkout.ts";

const before = Deno.env.get("BENCH_BEFORE");
const boxCount = Number(Deno.env.get("BENCH_REGISTRY_BOXES") ?? 2_000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);

interface Run extends WrkResult {
  cpuMicros: number;
}

async function measure(server: BenchRegistry, path: string, cpus: string | undefined): Promise<Run> {
  const pid = server.server.process.pid;
  const cpuBefore = cpuSecondsOf(pid);
  const result = await runWrk(`${server.server.url}${path}`, { seconds, connections: 50, threads: 1, cpus });
  const cpu = cpuSecondsOf(pid) - cpuBefore;
  return { ...result, cpuMicros: (cpu * 1e6) / (result.requestsPerSec * seconds) };
}

async function seed(server: BenchRegistry): Promise<number> {
  const started = performance.now();
  await seedBoxes(server.api, server.token, "alice", boxCount, 64);
  return (boxCount * 4) / ((performance.now() - started) / 1000);
}

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  if (!before) {
    return { title: "Before/after (skipped: set BENCH_BEFORE to a git revision)", figures: [], notes: [] };
  }
  if (!hasCommand("wrk")) throw new Error("wrk is not installed");
  const tree = await checkout(before);
  let old: BenchRegistry | undefined;
  let current: BenchRegistry | undefined;
  try {
    old = await startBenchRegistry({}, `${tree.dir}/main.ts`);
    current = await startBenchRegistry();
    const pinOld = await pinServer(old.server.process.pid);
    const pin = await pinServer(current.server.process.pid);
    const cpus = pin.clientCpus ?? pinOld.clientCpus;
    // Seeding alternates too: first the old, then this one (the machine warms up evenly enough over 8,000 writes).
    const seedOld = await seed(old);
    const seedNew = await seed(current);
    const sample = boxName(Math.floor(boxCount / 2));
    const figures: Figure[] = [{
      name: `seeding ${boxCount} boxes via the API (4 writes each, 64 in flight)`,
      value: seedNew,
      unit: "writes/s",
      baseline: { name: `before (${before})`, value: seedOld },
    }];
    const notes: string[] = [];
    for (
      const [label, path] of [["GET /api/v1/box/:u/:b", `/api/v1/box/alice/${sample}`], [
        "GET /:u/:b (metadata)",
        `/alice/${sample}`,
      ]] as const
    ) {
      const olds: Run[] = [];
      const news: Run[] = [];
      await measure(old, path, cpus);
      await measure(current, path, cpus);
      for (let round = 0; round < rounds; round++) {
        if (round % 2 === 0) {
          olds.push(await measure(old, path, cpus));
          news.push(await measure(current, path, cpus));
        } else {
          news.push(await measure(current, path, cpus));
          olds.push(await measure(old, path, cpus));
        }
      }
      figures.push({
        name: `${label} req/s`,
        value: median(news.map((r) => r.requestsPerSec)),
        unit: "req/s",
        baseline: { name: `before (${before})`, value: median(olds.map((r) => r.requestsPerSec)) },
      });
      figures.push({
        name: `${label} server CPU per request`,
        value: median(news.map((r) => r.cpuMicros)),
        unit: "µs",
        baseline: { name: `before (${before})`, value: median(olds.map((r) => r.cpuMicros)) },
      });
      notes.push(
        `${label}: after/before req/s per round ${
          news.map((r, i) => (r.requestsPerSec / olds[i]!.requestsPerSec).toFixed(2)).join(", ")
        }; CPU µs per request after ${news.map((r) => r.cpuMicros.toFixed(1)).join(", ")}, before ${
          olds.map((r) => r.cpuMicros.toFixed(1)).join(", ")
        }`,
      );
    }
    notes.push(
      `${rounds} rounds of ${seconds} s per route, the order alternating; both servers pinned to CPU ${
        pin.serverCpus ?? "(unpinned)"
      }, wrk to ${cpus ?? "(unpinned)"}; load average at the end ${
        Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
      }`,
    );
    return { title: `Before (${before}) and after, ${boxCount} boxes (wrk, 50 connections)`, figures, notes };
  } finally {
    await old?.close();
    await current?.close();
    await tree.remove();
  }
}
