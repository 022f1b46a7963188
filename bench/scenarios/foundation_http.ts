// HTTP: a trivial JSON route through wharf's router (with its access log) against Deno.serve returning the
// same bytes from memory, both measured with wrk (50 connections) in the same run, alternating twice.

import { type Figure, hasCommand, runWrk, startChild } from "../lib.ts";

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  if (!hasCommand("wrk")) throw new Error("wrk is not installed (apt-get install wrk); skipped");
  const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
  const dataDir = await Deno.makeTempDir({ prefix: "wharf-bench-http-" });
  const main = new URL("../../main.ts", import.meta.url).pathname;
  const wharf = await startChild(main, ["--port", "0", "--data-dir", dataDir], /listening on (\S+)/);
  const quietDir = await Deno.makeTempDir({ prefix: "wharf-bench-http-" });
  const quiet = await startChild(
    main,
    ["--port", "0", "--data-dir", quietDir, "--log-level", "warn"],
    /listening on (\S+)/,
  );
  const bytes = await (await fetch(`${wharf.match[1]}/v1/agent/health`)).text();
  const plainScript = new URL("../plain_server.ts", import.meta.url).pathname;
  const plain = await startChild(plainScript, [bytes], /listening on (\S+)/);
  const reading = await startChild(
    plainScript,
    [bytes, "application/json", "--read-url"],
    /listening on (\S+)/,
  );
  try {
    const results = {
      wharf: [] as number[],
      quiet: [] as number[],
      plain: [] as number[],
      reading: [] as number[],
      wharfP99: [] as number[],
    };
    for (let round = 0; round < 2; round++) {
      const p = await runWrk(`${plain.match[1]}/v1/agent/health`, { seconds });
      const w = await runWrk(`${wharf.match[1]}/v1/agent/health`, { seconds });
      results.quiet.push((await runWrk(`${quiet.match[1]}/v1/agent/health`, { seconds })).requestsPerSec);
      results.plain.push(p.requestsPerSec);
      results.reading.push((await runWrk(`${reading.match[1]}/v1/agent/health`, { seconds })).requestsPerSec);
      results.wharf.push(w.requestsPerSec);
      results.wharfP99.push(w.p99ms);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return {
      title: "HTTP: trivial JSON route (GET /v1/agent/health), wrk -t2 -c50",
      figures: [{
        name: "requests/s through the router, access log on",
        value: mean(results.wharf),
        unit: "req/s",
        baseline: { name: "Deno.serve, same bytes", value: mean(results.plain) },
        target: "≥ 0.9×",
      }, {
        name: "requests/s through the router, access log off (--log-level warn)",
        value: mean(results.quiet),
        unit: "req/s",
        baseline: { name: "Deno.serve, same bytes", value: mean(results.plain) },
        target: "≥ 0.9×",
      }, {
        name: "requests/s through the router, access log on",
        value: mean(results.wharf),
        unit: "req/s",
        baseline: {
          name: "Deno.serve, same bytes, reading request.url and method",
          value: mean(results.reading),
        },
      }, { name: "wharf p99 latency (access log on)", value: Math.max(...results.wharfP99), unit: "ms" }],
      notes: [
        `rounds: wharf ${results.wharf.map(Math.round).join(", ")}; plain ${
          results.plain.map(Math.round).join(", ")
        }`,
      ],
    };
  } finally {
    await wharf.stop();
    await quiet.stop();
    await Deno.remove(quietDir, { recursive: true });
    await plain.stop();
    await reading.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
}
