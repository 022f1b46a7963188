// HTTP request metrics: one RouteMetrics per route, resolved when the router is built, so a request costs an
// array read, a counter increment and a histogram bucket (no label strings built per request).

import { type HistogramChild, type MetricsRegistry, type ValueChild, type ValueFamily } from "./registry.ts";

/** The route label of a request no route matched (its path is never a label: docs/operations.md#metrics). */
export const unmatchedRoute = "unmatched";

const statusClasses = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"] as const;

/** The counters and latency histogram one route (or a family's unmatched paths) records into. */
export class RouteMetrics {
  readonly #byClass: (ValueChild | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ];
  constructor(
    private readonly requests: ValueFamily,
    private readonly duration: HistogramChild,
    private readonly family: string,
    private readonly route: string,
  ) {}

  /** One answered request: its status and how long the router took to answer it, in milliseconds. */
  record(status: number, ms: number): void {
    const cls = status >= 100 && status < 600 ? (status / 100) | 0 : 0;
    let child = this.#byClass[cls];
    if (child === undefined) {
      child = this.#byClass[cls] = this.requests.labels(this.family, this.route, statusClasses[cls]!);
    }
    child.value++;
    this.duration.observe(ms / 1000);
  }
}

export class HttpMetrics {
  readonly #requests: ValueFamily;
  readonly #duration;
  readonly #unmatched = new Map<string, RouteMetrics>();

  constructor(registry: MetricsRegistry) {
    this.#requests = registry.counter(
      "wharf_http_requests_total",
      'HTTP requests answered, by API family, route pattern ("unmatched" when no route matched) and status class.',
      ["family", "route", "status_class"],
    );
    this.#duration = registry.histogram(
      "wharf_http_request_duration_seconds",
      "Time from a request reaching the router to its response headers, by API family.",
      undefined,
      ["family"],
    );
  }

  /** The metrics of one route: `pattern` is the route's declared path pattern, never a request's path. */
  forRoute(family: string | undefined, pattern: string): RouteMetrics {
    const name = family ?? "none";
    return new RouteMetrics(this.#requests, this.#duration.labels(name), name, pattern);
  }

  /** Requests of a family that matched no route (404, 405, a malformed Host or path). */
  unmatched(family: string | undefined): RouteMetrics {
    const name = family ?? "none";
    let m = this.#unmatched.get(name);
    if (!m) {
      m = new RouteMetrics(this.#requests, this.#duration.labels(name), name, unmatchedRoute);
      this.#unmatched.set(name, m);
    }
    return m;
  }
}
