// Connection-layer metrics (lib/serve.ts): open connections, requests in flight, refusals past the cap and
// timeouts, all read at scrape time from the server's own counts (nothing added per request).

import type { ConnectionStats } from "../serve.ts";
import type { MetricsRegistry } from "./registry.ts";

export function registerConnectionMetrics(registry: MetricsRegistry, stats: () => ConnectionStats): void {
  const open = registry.gauge("wharf_http_open_connections", "TCP connections open now.").labels();
  const inflight = registry.gauge(
    "wharf_http_in_flight_requests",
    "Requests whose response is not completely sent yet (streams and downloads included).",
  ).labels();
  const refused = registry.counter(
    "wharf_http_refused_connections_total",
    "Connections answered 503 and closed because WHARF_MAX_CONNECTIONS were open.",
  ).labels();
  const timedOut = registry.counter(
    "wharf_http_timed_out_connections_total",
    "Connections closed by a timeout: header (WHARF_HEADER_TIMEOUT), idle (WHARF_IDLE_TIMEOUT), body (WHARF_BODY_TIMEOUT).",
    ["timeout"],
  );
  const header = timedOut.labels("header");
  const idle = timedOut.labels("idle");
  const body = timedOut.labels("body");
  registry.onScrape(() => {
    const s = stats();
    open.set(s.open);
    inflight.set(s.inflight);
    refused.set(s.refused);
    header.set(s.timedOut.header);
    idle.set(s.timedOut.idle);
    body.set(s.timedOut.body);
  });
}
