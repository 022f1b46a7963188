// The per-request cost of request metrics (lib/metrics/http.ts) in-process: the same requests through two
// routers over the app's route table, one with metrics and one without, in alternating rounds of one run (the
// median of each wins over the noise of a shared machine). `deno run -A bench/metrics_cost.ts [rounds] [requests per round]`.

import { Router } from "../lib/router.ts";
import { createLogger } from "../lib/log.ts";
import { jsonText } from "../lib/http.ts";
import { HttpMetrics, MetricsRegistry } from "../lib/metrics/mod.ts";
import { withServerFamilies } from "../tests/helpers/families.ts";
import { startTestServer } from "../tests/helpers/server.ts";

const rounds = Number(Deno.args[0] ?? 41);
const perRound = Number(Deno.args[1] ?? 20_000);
const body = JSON.stringify({ server: { ok: true, message: "ok" } });

const srv = await startTestServer();
const routes = srv.server.routes.map((r) => ({ ...r, handler: () => jsonText(body) }));
await srv.stop();

function router(metrics: boolean, accessLog: boolean): Router {
  const lines: string[] = [];
  const logger = accessLog
    ? createLogger("info", (l) => {
      if (lines.push(l) > 1000) lines.length = 0;
    })
    : createLogger("warn");
  return Router.forGroups(withServerFamilies(routes), {
    logger,
    maxBodyBytes: 1 << 20,
    trustProxy: false,
    metrics: metrics ? new HttpMetrics(new MetricsRegistry()) : undefined,
  });
}

/**
 * µs per request of `perRound` requests through `r` (answers are synchronous: no await). One Request object is
 * handed in again and again (the router only reads it), so its construction adds no noise to the difference.
 */
function round(r: Router, request: Request): number {
  const started = performance.now();
  for (let i = 0; i < perRound; i++) r.handle(request, "127.0.0.1");
  return ((performance.now() - started) * 1000) / perRound;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const accessLog of [false, true]) {
  const off = router(false, accessLog);
  const on = router(true, accessLog);
  for (const path of ["/v1/agent/health", "/api/v1/box/alice/box-00042", "/v1/no/such/path"]) {
    const url = new Request(`http://127.0.0.1${path}`);
    const times = { off: [] as number[], on: [] as number[] };
    round(off, url), round(on, url); // warm-up
    for (let i = 0; i < rounds; i++) {
      // Alternating order, so neither side always runs first after the other's garbage.
      if (i % 2) (times.off.push(round(off, url)), times.on.push(round(on, url)));
      else (times.on.push(round(on, url)), times.off.push(round(off, url)));
    }
    const a = median(times.off), b = median(times.on);
    console.log(
      `access log ${accessLog ? "on " : "off"}  ${path.padEnd(30)} metrics off ${a.toFixed(2)} µs  on ${
        b.toFixed(2)
      } µs  Δ ${(b - a).toFixed(2)} µs/request`,
    );
  }
}
