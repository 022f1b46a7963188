// Registry reads measured with every server loaded at once: wharf, the bare baseline, the protected floor and the
// promised-work floor (bench/registry_answers.ts) share the pinned server CPU while a wrk per server loads each,
// so whatever else the machine runs slows all four alike. Each server's CPU time per request gives its requests
// per CPU-second, and the ratios to the baseline's stay steady on a busy machine where back-to-back runs
// (registry_reads.ts) swing by ±50 %. With BENCH_BEFORE (a git revision) that revision's wharf, seeded the same
// way, is loaded beside them: before and after in one run. Settings: BENCH_REGISTRY_BOXES (2,000), BENCH_SECONDS
// (4 per round), BENCH_ROUNDS (7).

import { cpuTimesOf, type Figure, hasCommand, median, pinServer, runWrk } from "../lib.ts";
import { captureAnswers, type ReplayServers, startReplayServers } from "../registry_answers.ts";
import { boxName, seedBoxes } from "../registry_seed.ts";
import { type BenchRegistry, startBenchRegistry } from "../registry_server.ts";
import { checkout } from "../git_checkout.ts";

const boxCount = Number(Deno.env.get("BENCH_REGISTRY_BOXES") ?? 2_000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 4);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 7);
const before = Deno.env.get("BENCH_BEFORE");
/** wrk connections per server: 4 servers × 12 ≈ the 50 of the back-to-back runs (60 with BENCH_BEFORE). */
const connections = 12;

interface Loaded {
  name: string;
  url: string;
  pid: number;
}

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  if (!hasCommand("wrk")) throw new Error("wrk is not installed");
  const registry = await startBenchRegistry();
  let replay: ReplayServers | undefined;
  let tree: Awaited<ReturnType<typeof checkout>> | undefined;
  let old: BenchRegistry | undefined;
  try {
    const { api, token, server } = registry;
    await seedBoxes(api, token, "alice", boxCount, 64);
    if (before) {
      tree = await checkout(before);
      old = await startBenchRegistry({}, `${tree.dir}/main.ts`);
      await seedBoxes(old.api, old.token, "alice", boxCount, 64);
    }
    const sample = boxName(Math.floor(boxCount / 2));
    const targets = [
      { name: "GET /api/v1/box/:u/:b", path: `/api/v1/box/alice/${sample}` },
      { name: "GET /:u/:b (metadata)", path: `/alice/${sample}` },
    ];
    const captured = await captureAnswers(server.url, targets, registry.dir);
    const { serverCpus, clientCpus } = await pinServer(server.process.pid);
    if (old) await pinServer(old.server.process.pid);
    replay = await startReplayServers(captured, serverCpus);
    const servers: Loaded[] = [
      { name: "wharf", url: server.url, pid: server.process.pid },
      ...(["baseline", "floor", "promised"] as const).map((name) => ({
        name,
        url: replay![name].match[1]!,
        pid: replay![name].child.pid,
      })),
      ...(old ? [{ name: `before (${before})`, url: old.server.url, pid: old.server.process.pid }] : []),
    ];
    const [wharf, baseline, floor, promised, beforeWharf] = [0, 1, 2, 3, 4];
    const loadAll = (path: string, secs: number) =>
      Promise.all(
        servers.map((s) =>
          runWrk(`${s.url}${path}`, { seconds: secs, connections, threads: 1, cpus: clientCpus })
        ),
      );

    const figures: Figure[] = [];
    const notes: string[] = [];
    for (const t of targets) {
      await loadAll(t.path, 1); // warm-up, unmeasured
      /** cpuMicros[server][round]: CPU µs per request served. */
      const cpuMicros = servers.map(() => [] as number[]);
      /** The same, in the server's own code only (the rest is the kernel's: TCP on loopback, epoll). */
      const userMicros = servers.map(() => [] as number[]);
      for (let round = 0; round < rounds; round++) {
        const before = servers.map((s) => cpuTimesOf(s.pid));
        const results = await loadAll(t.path, seconds);
        servers.forEach((s, i) => {
          const requests = results[i]!.requestsPerSec * seconds;
          const after = cpuTimesOf(s.pid);
          const user = after.user - before[i]!.user;
          cpuMicros[i]!.push(((user + after.system - before[i]!.system) * 1e6) / requests);
          userMicros[i]!.push((user * 1e6) / requests);
        });
      }
      /** Per round: the baseline's CPU per request over this server's (its requests/s on a whole core, relative). */
      const relative = (i: number) => cpuMicros[i]!.map((c, r) => cpuMicros[baseline]![r]! / c);
      const perCpuSecond = (i: number) => 1e6 / median(cpuMicros[i]!);
      const baselineFigure = { name: "Deno.serve, same bytes", value: perCpuSecond(baseline) };
      for (
        const [i, label] of [[wharf, "wharf"], [floor, "protected floor"], [
          promised,
          "promised-work floor",
        ]] as const
      ) {
        figures.push({
          name: `${t.name}: ${label}, requests per CPU-second`,
          value: perCpuSecond(i),
          unit: "req/CPU-s",
          baseline: baselineFigure,
          target: i === wharf ? "≥ 0.8×" : undefined,
        });
      }
      if (old) {
        figures.push({
          name: `${t.name}: wharf before (${before}), requests per CPU-second`,
          value: perCpuSecond(beforeWharf),
          unit: "req/CPU-s",
          baseline: baselineFigure,
        });
        const afterOverBefore = cpuMicros[wharf]!.map((c, r) => c / cpuMicros[beforeWharf]![r]!);
        notes.push(
          `${t.name}: CPU per request after ÷ before (${before}) ${fmt(afterOverBefore)}; before ${
            median(cpuMicros[beforeWharf]!).toFixed(2)
          } µs`,
        );
      }
      const wharfOver = (i: number) => cpuMicros[i]!.map((c, r) => c / cpuMicros[wharf]![r]!);
      notes.push(
        `${t.name}: per-round baseline-CPU ÷ server-CPU — wharf ${fmt(relative(wharf))}, protected floor ${
          fmt(relative(floor))
        }, promised-work floor ${fmt(relative(promised))}; wharf against the protected floor ${
          median(wharfOver(floor)).toFixed(2)
        }×, against the promised-work floor ${
          median(wharfOver(promised)).toFixed(2)
        }× (medians of per-round ratios)`,
      );
      notes.push(
        `${t.name}: CPU µs per request (medians) wharf ${median(cpuMicros[wharf]!).toFixed(2)}, baseline ${
          median(cpuMicros[baseline]!).toFixed(2)
        }, protected floor ${median(cpuMicros[floor]!).toFixed(2)}, promised-work floor ${
          median(cpuMicros[promised]!).toFixed(2)
        }; of it in user space (the rest in the kernel) ${
          [wharf, baseline, floor, promised].map((i) => median(userMicros[i]!).toFixed(2)).join(" / ")
        }`,
      );
    }
    notes.push(
      `${rounds} rounds of ${seconds} s per route, the ${servers.length} servers loaded at once (a wrk each, ${connections} ` +
        `connections, 1 thread) on CPU ${serverCpus ?? "(unpinned)"}, wrk on ${
          clientCpus ?? "(unpinned)"
        }; ` +
        `load average at the end ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
    );
    return {
      title: `Registry reads with ${boxCount} boxes, all servers loaded at once (requests per CPU-second)`,
      figures,
      notes,
    };
  } finally {
    await replay?.stop();
    await old?.close();
    await tree?.remove();
    await registry.close();
  }
}

function fmt(values: number[]): string {
  return `${median(values).toFixed(2)} (rounds ${values.map((v) => v.toFixed(2)).join(", ")})`;
}
