// Registry reads with BENCH_REGISTRY_BOXES (10,000) boxes created through the API: box JSON, metadata and
// search under wrk (50 connections), each against a plain Deno.serve sending the same bytes from memory; box JSON
// and metadata also against the protected floor (the same bytes and headers through lib/serve.ts with the default
// timeouts and connection cap) and metadata against the same bytes and headers on a plain Deno.serve.
// BENCH_REGISTRY_SEARCH=0 leaves search out.

import {
  cpuCount,
  cpuSecondsOf,
  type Figure,
  hasCommand,
  median,
  pinServer,
  rssMiB,
  runWrk,
  type WrkResult,
} from "../lib.ts";
import { captureAnswers, type ReplayServers, startReplayServers } from "../registry_answers.ts";
import { boxName, seedBoxes } from "../registry_seed.ts";
import { startBenchRegistry } from "../registry_server.ts";

const boxCount = Number(Deno.env.get("BENCH_REGISTRY_BOXES") ?? 10_000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
/** Measurements per route: single wrk runs on a shared 2-core machine vary by ±20 %. */
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const withSearch = Deno.env.get("BENCH_REGISTRY_SEARCH") !== "0";

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  if (!hasCommand("wrk")) throw new Error("wrk is not installed");
  const registry = await startBenchRegistry();
  let replay: ReplayServers | undefined;
  try {
    const { api, token, server } = registry;
    const seedStarted = performance.now();
    await seedBoxes(api, token, "alice", boxCount, 64);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const checkpointSeconds = await settleCheckpoint(server.url);

    const sample = boxName(Math.floor(boxCount / 2));
    const targets: { name: string; path: string; target: string; reference?: boolean; floor?: boolean }[] = [
      { name: "GET /api/v1/box/:u/:b", path: `/api/v1/box/alice/${sample}`, target: "≥ 0.8×", floor: true },
      {
        name: "GET /:u/:b (metadata)",
        path: `/alice/${sample}`,
        target: "≥ 0.8×",
        reference: true,
        floor: true,
      },
    ];
    if (withSearch) {
      targets.push({
        name: "GET /api/v1/search?q&sort&page",
        path: "/api/v1/search?q=ubuntu&sort=downloads&order=desc&page=3&limit=10",
        target: "≥ 0.5×, p99 < 10 ms",
      });
    }
    const { sentHeaders, ...captured } = await captureAnswers(server.url, targets, registry.dir);
    // As in foundation_http.ts: with taskset and ≥ 2 CPUs, both servers run pinned to the last CPU (every thread)
    // and wrk to the others, so each measures a server on one whole core rather than a share it fights wrk for.
    const { pin, serverCpus, clientCpus } = await pinServer(server.process.pid);
    const threads = pin ? Math.max(1, cpuCount() - 1) : 2;
    const wrkOptions = (secs: number) => ({ seconds: secs, connections: 50, threads, cpus: clientCpus });
    replay = await startReplayServers({ sentHeaders, ...captured }, serverCpus);
    const [baselineUrl, referenceUrl, floorUrl, promisedUrl] = [
      replay.baseline,
      replay.reference,
      replay.floor,
      replay.promised,
    ].map((c) => c.match[1]!);
    const [baselinePid, floorPid, promisedPid] = [replay.baseline, replay.floor, replay.promised].map((c) =>
      c.child.pid
    );

    const figures: Figure[] = [{
      name: `seeding ${boxCount} boxes via the API (4 writes each, 64 in flight)`,
      value: (boxCount * 4) / seedSeconds,
      unit: "writes/s",
    }];
    const notes: string[] = [
      `reads measured at steady state: the seed's documents were checkpointed first (${
        checkpointSeconds.toFixed(1)
      } s after seeding)`,
      `${rounds} rounds of ${seconds} s per route; in each round wharf, the baseline, the same-headers reference ` +
      "and the protected floor (where measured) run back to back, the order reversed every other round, after a " +
      "1 s unmeasured warm-up of each; req/s and p99 figures are medians, the ratio is theirs",
    ];
    for (const t of targets) {
      const wharfRuns: MeasuredRun[] = [];
      const baseRuns: MeasuredRun[] = [];
      const refRuns: WrkResult[] = [];
      const floorRuns: MeasuredRun[] = [];
      const promisedRuns: MeasuredRun[] = [];
      // A short unmeasured run each first: the servers' JIT warm-up stays out of the figures.
      await runWrk(`${server.url}${t.path}`, wrkOptions(1));
      await runWrk(`${baselineUrl}${t.path}`, wrkOptions(1));
      if (t.reference) await runWrk(`${referenceUrl}${t.path}`, wrkOptions(1));
      if (t.floor) await runWrk(`${floorUrl}${t.path}`, wrkOptions(1));
      if (t.floor) await runWrk(`${promisedUrl}${t.path}`, wrkOptions(1));
      for (let round = 0; round < rounds; round++) {
        const runWharf = async () =>
          wharfRuns.push(await measured(server.process.pid, `${server.url}${t.path}`, wrkOptions(seconds)));
        const runBase = async () =>
          baseRuns.push(await measured(baselinePid!, `${baselineUrl}${t.path}`, wrkOptions(seconds)));
        const runRef = async () => {
          if (t.reference) refRuns.push(await runWrk(`${referenceUrl}${t.path}`, wrkOptions(seconds)));
        };
        const runFloor = async () => {
          if (t.floor) {
            floorRuns.push(await measured(floorPid!, `${floorUrl}${t.path}`, wrkOptions(seconds)));
          }
        };
        const runPromised = async () => {
          if (t.floor) {
            promisedRuns.push(
              await measured(promisedPid!, `${promisedUrl}${t.path}`, wrkOptions(seconds)),
            );
          }
        };
        if (round % 2 === 0) await runWharf().then(runBase).then(runRef).then(runFloor).then(runPromised);
        else await runPromised().then(runFloor).then(runRef).then(runBase).then(runWharf);
      }
      const ratios = wharfRuns.map((w, i) => w.requestsPerSec / baseRuns[i]!.requestsPerSec);
      figures.push({
        name: `${t.name} req/s`,
        value: median(wharfRuns.map((r) => r.requestsPerSec)),
        unit: "req/s",
        baseline: { name: "Deno.serve, same bytes", value: median(baseRuns.map((r) => r.requestsPerSec)) },
        target: t.target,
      });
      figures.push({
        name: `${t.name} server CPU per request`,
        value: median(wharfRuns.map(cpuMicros)),
        unit: "µs",
        baseline: { name: "Deno.serve, same bytes", value: median(baseRuns.map(cpuMicros)) },
      });
      figures.push({
        name: `${t.name} p99`,
        value: median(wharfRuns.map((r) => r.p99ms)),
        unit: "ms",
        baseline: { name: "p99", value: median(baseRuns.map((r) => r.p99ms)) },
      });
      notes.push(
        `${t.name}: per-round ratios ${ratios.map((r) => r.toFixed(2)).join(", ")} (median ${
          median(ratios).toFixed(2)
        }); wharf p99 per round ${wharfRuns.map((r) => r.p99ms.toFixed(2)).join(", ")} ms, baseline ${
          baseRuns.map((r) => r.p99ms.toFixed(2)).join(", ")
        } ms; wharf p50 median ${median(wharfRuns.map((r) => r.p50ms)).toFixed(2)} ms`,
      );
      if (refRuns.length) {
        const refRatios = wharfRuns.map((w, i) => w.requestsPerSec / refRuns[i]!.requestsPerSec);
        const refVsBase = refRuns.map((r, i) => r.requestsPerSec / baseRuns[i]!.requestsPerSec);
        figures.push({
          name: `${t.name} req/s against the same bytes with wharf's headers`,
          value: median(wharfRuns.map((r) => r.requestsPerSec)),
          unit: "req/s",
          baseline: {
            name: "Deno.serve, same bytes + same headers",
            value: median(refRuns.map((r) => r.requestsPerSec)),
          },
        });
        notes.push(
          `${t.name}: the baseline sends ${JSON.stringify(["content-type"])}, wharf sends ${
            JSON.stringify(sentHeaders[t.name])
          } (besides date, content-length, vary). ` +
            `A Deno.serve sending the same bytes with wharf's headers (bench/registry_same_headers_server.ts) ` +
            `reached ${median(refVsBase).toFixed(2)}× of the baseline (rounds ${
              refVsBase.map((r) => r.toFixed(2)).join(", ")
            }); wharf against it: ${median(refRatios).toFixed(2)}× (rounds ${
              refRatios.map((r) => r.toFixed(2)).join(", ")
            })`,
        );
      }
      if (floorRuns.length) {
        const floorVsBase = floorRuns.map((r, i) => r.requestsPerSec / baseRuns[i]!.requestsPerSec);
        const wharfVsFloor = wharfRuns.map((w, i) => w.requestsPerSec / floorRuns[i]!.requestsPerSec);
        figures.push({
          name: `${t.name} req/s, protected floor against the baseline`,
          value: median(floorRuns.map((r) => r.requestsPerSec)),
          unit: "req/s",
          baseline: { name: "Deno.serve, same bytes", value: median(baseRuns.map((r) => r.requestsPerSec)) },
        });
        figures.push({
          name: `${t.name} req/s against the protected floor`,
          value: median(wharfRuns.map((r) => r.requestsPerSec)),
          unit: "req/s",
          baseline: {
            name: "serve() of lib/serve.ts, same bytes + headers",
            value: median(floorRuns.map((r) => r.requestsPerSec)),
          },
          target: "≥ 0.95× when the floor is < 0.8×",
        });
        figures.push({
          name: `${t.name} server CPU per request against the protected floor`,
          value: median(wharfRuns.map(cpuMicros)),
          unit: "µs",
          baseline: {
            name: "serve() of lib/serve.ts, same bytes + headers",
            value: median(floorRuns.map(cpuMicros)),
          },
        });
        notes.push(
          `${t.name}: protected floor / baseline per round ${
            floorVsBase.map((r) => r.toFixed(2)).join(", ")
          } (median ${median(floorVsBase).toFixed(2)}); wharf / floor per round ${
            wharfVsFloor.map((r) => r.toFixed(2)).join(", ")
          } (median ${median(wharfVsFloor).toFixed(2)}); floor p99 per round ${
            floorRuns.map((r) => r.p99ms.toFixed(2)).join(", ")
          } ms`,
        );
      }
      if (promisedRuns.length) {
        const promisedVsBase = promisedRuns.map((r, i) => r.requestsPerSec / baseRuns[i]!.requestsPerSec);
        const wharfVsPromised = wharfRuns.map((w, i) => w.requestsPerSec / promisedRuns[i]!.requestsPerSec);
        const promisedName =
          "the promised-work floor (protected floor + the API's per-request work, by hand)";
        figures.push({
          name: `${t.name} req/s, promised-work floor against the baseline`,
          value: median(promisedRuns.map((r) => r.requestsPerSec)),
          unit: "req/s",
          baseline: { name: "Deno.serve, same bytes", value: median(baseRuns.map((r) => r.requestsPerSec)) },
        });
        figures.push({
          name: `${t.name} req/s against the promised-work floor`,
          value: median(wharfRuns.map((r) => r.requestsPerSec)),
          unit: "req/s",
          baseline: { name: promisedName, value: median(promisedRuns.map((r) => r.requestsPerSec)) },
        });
        figures.push({
          name: `${t.name} server CPU per request against the promised-work floor`,
          value: median(wharfRuns.map(cpuMicros)),
          unit: "µs",
          baseline: { name: promisedName, value: median(promisedRuns.map(cpuMicros)) },
        });
        notes.push(
          `${t.name}: promised-work floor / baseline per round ${
            promisedVsBase.map((r) => r.toFixed(2)).join(", ")
          } (median ${median(promisedVsBase).toFixed(2)}); wharf / promised-work floor per round ${
            wharfVsPromised.map((r) => r.toFixed(2)).join(", ")
          } (median ${median(wharfVsPromised).toFixed(2)})`,
        );
      }
    }
    notes.push(
      "protected floor: bench/registry_same_headers_server.ts --protected, the same bytes and headers as the " +
        "same-headers reference, served by lib/serve.ts serve() (header 10 s, body 60 s, idle 75 s, connection " +
        "cap: app.ts's defaults) with no router, store or access log; the promised-work floor: the same with " +
        "--promised, adding by hand what the API promises on each anonymous read (metrics, token sources, Host, " +
        "X-Request-Id echo, for metadata Accept, the session cookie and Vary, the response-header check)",
    );
    notes.push(
      (pin ? `servers pinned to CPU ${serverCpus}, wrk to CPU ${clientCpus}: ` : "unpinned: ") +
        `\`wrk -t${threads} -c50 -d${seconds}s --latency ${server.url}<path>\`, paths: ${
          targets.map((t) => t.path).join(" ")
        }`,
    );
    notes.push(
      `server RSS after the run: ${rssMiB(server.process.pid).toFixed(0)} MiB with ${boxCount} boxes`,
    );
    notes.push(
      `load average at the end: ${
        Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
      } (${navigator.hardwareConcurrency} CPUs)`,
    );
    return { title: `Registry reads with ${boxCount} boxes (wrk, 50 connections)`, figures, notes };
  } finally {
    await replay?.stop();
    await registry.close();
  }
}

/** A wrk run with the server's own CPU time over it (user + system, every thread): µs per request served. */
interface MeasuredRun extends WrkResult {
  serverCpuSeconds: number;
  seconds: number;
}

async function measured(
  pid: number,
  url: string,
  options: Parameters<typeof runWrk>[1] & { seconds: number },
): Promise<MeasuredRun> {
  const before = cpuSecondsOf(pid);
  const result = await runWrk(url, options);
  return { ...result, serverCpuSeconds: cpuSecondsOf(pid) - before, seconds: options.seconds };
}

/**
 * Server CPU µs per request: unlike req/s it barely moves with what else the machine runs (the server is pinned
 * to its core either way), so it compares wharf with its floor on a busy machine too.
 */
function cpuMicros(run: MeasuredRun): number {
  return (run.serverCpuSeconds * 1e6) / (run.requestsPerSec * run.seconds);
}

/**
 * Waits until the store's checkpoint has caught up with the log (GET /health), so the reads are measured at
 * steady state rather than while the seed's 40,000 writes are still being written out in the background.
 */
async function settleCheckpoint(url: string, limitMs = 180_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    const health = await (await fetch(`${url}/health`)).json();
    if (health.checkpoint_index >= health.index) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return (performance.now() - started) / 1000;
}
