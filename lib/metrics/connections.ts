// Connection-layer metrics (lib/serve.ts): open connections, requests in flight, refusals past the cap and
// timeouts, all read at scrape time from the server's own counts (nothing added per request).

import type { ConnectionStats } from "../serve.ts";
import type { MetricsRegistry } from "./registry.ts";

export function registerConnectionMetrics(registry: MetricsRegistry, stats: () => ConnectionStats): void {
  let latest = stats();
  registry.onScrape(() => void (latest = stats()));
  registry.gaugeFrom("wharf_http_open_connections", "TCP connections open now.", () => latest.open);
  registry.gaugeFrom(
    "wharf_http_in_flight_requests",
    "Requests whose response is not completely sent yet (streams and downloads included).",
    () => latest.inflight,
  );
  registry.counterFrom(
    "wharf_http_refused_connections_total",
    "Connections answered 503 and closed because WHARF_MAX_CONNECTIONS were open.",
    () => latest.refused,
  );
  const timedOut = registry.counter(
    "wharf_http_timed_out_connections_total",
    "Connections closed by a timeout: header (WHARF_HEADER_TIMEOUT), idle (WHARF_IDLE_TIMEOUT), body (WHARF_BODY_TIMEOUT).",
    ["timeout"],
  );
  for (const timeout of ["header", "idle", "body"] as const) {
    const child = timedOut.labels(timeout);
    registry.onScrape(() => child.set(latest.timedOut[timeout]));
  }
}
