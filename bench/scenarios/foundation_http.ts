// HTTP: a trivial JSON route through wharf's router (with its access log) against Deno.serve returning the
// same bytes from memory, measured with wrk (50 connections), interleaved over several rounds.
//
// Baseline (why): Deno.serve answering the same response bytes as fast as Deno can, i.e. with a string body
// (Deno 2.9.6 copies a Uint8Array body per response: ~10 % fewer requests/s). Sessions 1–4 measured against the
// Uint8Array form; it still runs ("plain, Uint8Array body") so figures can be compared across sessions.
//
// Method (why): on a 2-core machine wrk and the server compete for CPU when both float, so the baseline swung
// by ±15% between rounds. When taskset and ≥ 2 CPUs are present, every server runs pinned to the last CPU and
// wrk (one thread) to the others, identically for wharf and the baselines; the CPU time of server and wrk is
// recorded per run to show which one saturates. Each server gets a warm-up run first; then the servers take
// turns, round after round, so drift hits all of them alike. Figures are medians over the rounds; the notes
// give each round's wharf/baseline ratio (same round) with their median and range.
// BENCH_SECONDS (default 3) per run, BENCH_ROUNDS (default 7), BENCH_HTTP_PIN=0 to let everything float;
// BENCH_HTTP_COMPARE=/other/checkout/main.ts adds that wharf (access log on) to the rotation, e.g. the previous
// commit (`git archive HEAD | tar -x -C /tmp/before`) for a before/after in the same run.

import { cpuCount, cpuSecondsOf, type Figure, hasCommand, median, runWrk, startChild } from "../lib.ts";

type Child = Awaited<ReturnType<typeof startChild>>;

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  if (!hasCommand("wrk")) throw new Error("wrk is not installed (apt-get install wrk); skipped");
  const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 3);
  const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 7);
  const pin = Deno.env.get("BENCH_HTTP_PIN") !== "0" && hasCommand("taskset") && cpuCount() >= 2;
  const serverCpus = pin ? String(cpuCount() - 1) : undefined;
  const clientCpus = pin ? (cpuCount() === 2 ? "0" : `0-${cpuCount() - 2}`) : undefined;
  const threads = pin ? Math.max(1, cpuCount() - 1) : 2;
  const main = new URL("../../main.ts", import.meta.url).pathname;
  const plainScript = new URL("../plain_server.ts", import.meta.url).pathname;
  const floorScript = new URL("../http_floor_server.ts", import.meta.url).pathname;
  const dirs: string[] = [];
  const children: Child[] = [];
  const start = async (script: string, args: string[]) => {
    const child = await startChild(script, args, /listening on (\S+)/, {}, { cpus: serverCpus });
    children.push(child);
    return child;
  };
  const wharfArgs = async (...extra: string[]) => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-bench-http-" });
    dirs.push(dir);
    return ["--port", "0", "--data-dir", dir, ...extra];
  };
  try {
    const servers: Record<string, Child> = {};
    servers.plain = await start(plainScript, [JSON.stringify({ server: { ok: true, message: "ok" } })]);
    servers.bytes = await start(plainScript, [
      JSON.stringify({ server: { ok: true, message: "ok" } }),
      "--bytes",
    ]);
    servers.wharf = await start(main, await wharfArgs());
    servers.quiet = await start(main, await wharfArgs("--log-level", "warn"));
    const path = "/v1/agent/health";
    const bytes = await (await fetch(`${servers.wharf.match[1]}${path}`)).text();
    for (const name of ["plain", "bytes"]) {
      const plainBytes = await (await fetch(`${servers[name]!.match[1]}${path}`)).text();
      if (bytes !== plainBytes) {
        throw new Error(`baseline bytes differ from wharf's: ${plainBytes} vs ${bytes}`);
      }
    }
    servers.reading = await start(plainScript, [bytes, "application/json", "--read-url"]);
    servers.floor = await start(floorScript, [bytes]);
    const compare = Deno.env.get("BENCH_HTTP_COMPARE");
    if (compare) servers.compare = await start(compare, await wharfArgs());
    const names = ["plain", "bytes", "wharf", "quiet", "reading", "floor", ...(compare ? ["compare"] : [])];
    const rps: Record<string, number[]> = {};
    const serverCpu: Record<string, number[]> = {};
    const cpuPerRequest: Record<string, number[]> = {};
    const clientCpu: Record<string, number[]> = {};
    let wharfP99 = 0;
    for (const name of names) {
      await runWrk(`${servers[name]!.match[1]}${path}`, { seconds: 2, threads, cpus: clientCpus });
    }
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const child = servers[name]!;
        const before = cpuSecondsOf(child.child.pid);
        const result = await runWrk(`${child.match[1]}${path}`, { seconds, threads, cpus: clientCpus });
        const used = cpuSecondsOf(child.child.pid) - before;
        (serverCpu[name] ??= []).push(used / seconds);
        (cpuPerRequest[name] ??= []).push((used / (result.requestsPerSec * seconds)) * 1e6);
        (clientCpu[name] ??= []).push((result.cpuSeconds ?? NaN) / seconds);
        (rps[name] ??= []).push(result.requestsPerSec);
        if (name === "wharf") wharfP99 = Math.max(wharfP99, result.p99ms);
      }
    }
    const perRound = (name: string) => rps[name]!.map((v, i) => v / rps.plain![i]!);
    const describe = (xs: number[], digits: number) =>
      `median ${median(xs).toFixed(digits)} (range ${Math.min(...xs).toFixed(digits)}–${
        Math.max(...xs).toFixed(digits)
      })`;
    const baseline = { name: "Deno.serve, same bytes (string body)", value: median(rps.plain!) };
    return {
      title:
        `HTTP: trivial JSON route (GET ${path}), wrk -t${threads} -c50, ${rounds} interleaved rounds of ${seconds} s${
          pin ? `, server pinned to CPU ${serverCpus}, wrk to CPU ${clientCpus}` : ""
        }`,
      figures: [{
        name: "requests/s through the router, access log on",
        value: median(rps.wharf!),
        unit: "req/s",
        baseline,
        target: "≥ 0.9×",
      }, {
        name: "requests/s through the router, access log off (--log-level warn)",
        value: median(rps.quiet!),
        unit: "req/s",
        baseline,
      }, {
        name: "requests/s through the router, access log on",
        value: median(rps.wharf!),
        unit: "req/s",
        baseline: {
          name: "Deno.serve, same bytes, Uint8Array body (sessions 1–4)",
          value: median(rps.bytes!),
        },
      }, {
        name: "requests/s through the router, access log on",
        value: median(rps.wharf!),
        unit: "req/s",
        baseline: {
          name: "Deno.serve, same bytes, reading request.url and method",
          value: median(rps.reading!),
        },
      }, {
        name: "floor: Deno.serve reading URL and method, exact-path route, two clock reads, one access line",
        value: median(rps.floor!),
        unit: "req/s",
        baseline,
      }, { name: "wharf p99 latency (access log on, worst round)", value: wharfP99, unit: "ms" }],
      notes: [
        ...names.map((name) => `${name} req/s per round: ${rps[name]!.map(Math.round).join(", ")}`),
        `ratio per round, access log on: ${describe(perRound("wharf"), 2)}`,
        `ratio per round, access log off: ${describe(perRound("quiet"), 2)}`,
        `ratio per round, floor (bench/http_floor_server.ts): ${describe(perRound("floor"), 2)}`,
        `ratio per round, access log on, against the floor: ${
          describe(rps.wharf!.map((v, i) => v / rps.floor![i]!), 2)
        }`,
        `ratio per round, access log on, against the Uint8Array baseline: ${
          describe(rps.wharf!.map((v, i) => v / rps.bytes![i]!), 2)
        }`,
        ...(compare
          ? [`ratio per round, ${compare} (access log on): ${describe(perRound("compare"), 2)}`]
          : []),
        ...names.map((name) =>
          `CPU use (cores) during the ${name} runs: server ${describe(serverCpu[name]!, 2)}, wrk ${
            describe(clientCpu[name]!, 2)
          }; server CPU per request ${describe(cpuPerRequest[name]!, 1)} µs`
        ),
      ],
    };
  } finally {
    for (const child of children) await child.stop();
    for (const dir of dirs) await Deno.remove(dir, { recursive: true });
  }
}
