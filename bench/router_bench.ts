// deno bench: the router's per-request cost for a static JSON route, against a bare handler returning the
// same bytes (the in-process share of the HTTP figure in docs/benchmarks.md), with and without metrics.

import { type Route, Router } from "../lib/router.ts";
import { createLogger, formatAccessLine } from "../lib/log.ts";
import { json, jsonText } from "../lib/http.ts";
import { withServerFamilies } from "../tests/helpers/families.ts";
import { HttpMetrics, MetricsRegistry } from "../lib/metrics/mod.ts";

const body = JSON.stringify({ server: { ok: true, message: "ok" } });
const bytes = new TextEncoder().encode(body);
const filler = Array.from({ length: 100 }, (_, i) => ({
  method: "GET",
  path: `/v1/thing${i}/:id`,
  handler: () => json({}),
}));
const logged: string[] = [];

const health = {
  method: "GET",
  path: "/v1/agent/health",
  handler: () => jsonText(body), // as routes/events/mod.ts answers it: serialized once
};

/** A router over `routes` (by default 100 parameterised routes, then the health route) with `logger`. */
function makeRouter(
  logger: ReturnType<typeof createLogger>,
  routes: readonly Route[] = [...filler, health],
  metrics?: HttpMetrics,
): Router {
  return Router.forGroups(withServerFamilies(routes), {
    logger,
    maxBodyBytes: 1 << 20,
    trustProxy: false,
    metrics,
  });
}

const router = makeRouter(createLogger("info", (l) => {
  if (logged.push(l) > 1000) logged.length = 0;
}));
const quietRouter = makeRouter(createLogger("warn"));
// What app.ts runs: request metrics on (lib/metrics/http.ts), with the access log on and off.
const meteredRouter = makeRouter(
  createLogger("info", (l) => {
    if (logged.push(l) > 1000) logged.length = 0;
  }),
  undefined,
  new HttpMetrics(new MetricsRegistry()),
);
const quietMeteredRouter = makeRouter(
  createLogger("warn"),
  undefined,
  new HttpMetrics(new MetricsRegistry()),
);

Deno.bench("bare handler: new Response(bytes)", { baseline: true, group: "static route" }, async () => {
  const req = new Request("http://127.0.0.1/v1/agent/health");
  const res = new Response(bytes, { headers: { "Content-Type": "application/json" } });
  await res.arrayBuffer();
  void req;
});

for (
  const [name, routerUnderTest] of [
    ["router.handle, access log on", router],
    ["router.handle, access log off", quietRouter],
    ["router.handle, access log on, metrics on", meteredRouter],
    ["router.handle, access log off, metrics on", quietMeteredRouter],
  ] as const
) {
  Deno.bench(name, { group: "static route" }, async () => {
    const res = await routerUnderTest.handle(new Request("http://127.0.0.1/v1/agent/health"), "127.0.0.1");
    await res.arrayBuffer();
  });
}

// The access line alone, through the real stderr sink (buffered lines; run with 2>/dev/null to keep the
// terminal quiet), against the text formatter the test sink uses.
const stderrLogger = createLogger("info");
let n = 0;
Deno.bench("access line through the stderr sink", { group: "access log" }, () => {
  const ended = performance.now();
  stderrLogger.access(n, "GET", "/v1/agent/health", 200, ended - (n++ % 1000) / 137, ended);
});
Deno.bench("access line as text", { group: "access log", baseline: true }, () => {
  logged.push(
    formatAccessLine(Date.now(), "abcdef00001x", "GET", "/v1/agent/health", 200, (n++ % 1000) / 137),
  );
  if (logged.length > 1000) logged.length = 0;
});

// Path-parameter requests through the server's own route table (the console's open root routes before the
// registry's), with handlers that only answer: the cost of finding the route, not of serving it.
const appRoutes = await (async () => {
  const { startTestServer } = await import("../tests/helpers/server.ts");
  const srv = await startTestServer();
  try {
    return srv.server.routes.map((r) => ({ ...r, handler: () => jsonText(body) }));
  } finally {
    await srv.stop();
  }
})();
const appRouter = makeRouter(createLogger("warn"), appRoutes);
const meteredAppRouter = makeRouter(createLogger("warn"), appRoutes, new HttpMetrics(new MetricsRegistry()));
for (
  const path of [
    "/api/v1/box/alice/box-00042",
    "/api/v1/box/alice/box-00042/version/1.0.0",
    "/alice/box-00042",
    "/alice/boxes/box-00042",
    "/v1/auth-methods/ampw_1234567890",
  ]
) {
  for (const [suffix, table] of [["", appRouter], [", metrics on", meteredAppRouter]] as const) {
    Deno.bench(`app table: GET ${path}${suffix}`, { group: "app route table" }, async () => {
      const res = await table.handle(new Request(`http://127.0.0.1${path}`), "127.0.0.1");
      await res.arrayBuffer();
    });
  }
}
