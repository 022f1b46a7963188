// The node's metrics (docs/operations.md#metrics): the registry every family registers into, the router's
// request metrics, the process and storage metrics, and the two renderings /v1/metrics answers.

export { type HistogramChild, MetricsRegistry, type ValueChild, type ValueFamily } from "./registry.ts";
export { HttpMetrics, unmatchedRoute } from "./http.ts";
export { prometheusContentType, renderNomadJson, renderPrometheus } from "./text.ts";
export { registerProcessMetrics } from "./process.ts";
export { registerStoreMetrics } from "./store.ts";
export { registerConnectionMetrics } from "./connections.ts";
export { LoginMetrics } from "./logins.ts";
