// The router: finds a request's route (lib/router/match.ts) and runs it through the steps every request takes —
// request id, Host check, context, body limit, the route's own steps (cluster catch-up, its module's, HEAD; composed
// once per route), failures rendered in the shape of the family owning the path, the response-header guard, the
// access log and the request metrics (lib/metrics/http.ts).

import { ApiError } from "./errors.ts";
import { asApiError } from "./store_http.ts";
import { parseRequestUrl } from "./http.ts";
import type { Logger } from "./log.ts";
import { nextRequestSequence, requestIdOf } from "./request_id.ts";
import { SecretPathRedactor } from "./secret_paths.ts";
import { Context, type ContextSettings, type RemoteAddress } from "./router/context.ts";
import { type ApiFamily, FamilyTable } from "./router/families.ts";
import { RouteTable } from "./router/match.ts";
import { rawPath, requestPath } from "./router/request_path.ts";
import type { CompiledRoute, Route, RouteStep } from "./router/route.ts";
import type { HttpMetrics, RouteMetrics } from "./metrics/http.ts";
import type { Family } from "./http.ts";
import { AccessLog } from "./router/steps/access_log.ts";
import { checkBodyLimit } from "./router/steps/body_limit.ts";
import { catchUpWith, type ClusterView } from "./router/steps/cluster.ts";
import { HeaderGuard } from "./router/steps/header_guard.ts";
import { HostCheck } from "./router/steps/host_check.ts";

export type { Route, RouteStep } from "./router/route.ts";
export type { RemoteAddress } from "./router/context.ts";
export type { ApiFamily, ErrorRenderer, PathOwnership } from "./router/families.ts";
export type { ClusterView } from "./router/steps/cluster.ts";

/** A group of routes and the family they answer for (lib/app.ts ApiModule is one). */
export interface RouteGroup {
  routes: readonly Route[];
  /** Its routes' error shape and the paths it owns; a group without one renders by the path's owner only. */
  family?: ApiFamily;
  /** Steps around each of its routes' handlers, outermost first, after the router's own. */
  steps?: readonly RouteStep[];
}

export interface RouterOptions {
  logger: Logger;
  maxBodyBytes: number;
  trustProxy: boolean;
  /** Present on a cluster: how a request sees what other nodes committed before it arrived. */
  cluster?: ClusterView;
  /** Where requests are counted and timed (by family, route pattern and status class); none keeps no metrics. */
  metrics?: HttpMetrics;
}

/** What the constructor takes beyond RouterOptions: the groups' families and each route's group. */
interface GroupOptions {
  families: readonly ApiFamily[];
  groupOf: ReadonlyMap<Route, RouteGroup>;
}

export class Router {
  #table: RouteTable;
  #families: FamilyTable;
  #options: RouterOptions;
  #settings: ContextSettings;
  #accessLog: AccessLog;
  #hostCheck = new HostCheck();
  #headerGuard: HeaderGuard;

  /** A router over every group's routes, in order; each group's family renders the paths it owns. */
  static forGroups(groups: readonly RouteGroup[], options: RouterOptions): Router {
    const groupOf = new Map<Route, RouteGroup>();
    for (const group of groups) for (const route of group.routes) groupOf.set(route, group);
    const families = groups.flatMap((g) => g.family ? [g.family] : []);
    return new Router(groups.flatMap((g) => g.routes), options, { families, groupOf });
  }

  private constructor(routes: readonly Route[], options: RouterOptions, groups: GroupOptions) {
    this.#options = options;
    this.#accessLog = new AccessLog(
      options.logger,
      options.metrics !== undefined,
      new SecretPathRedactor(routes),
    );
    const families = new FamilyTable(groups.families);
    this.#families = families;
    this.#headerGuard = new HeaderGuard(options.logger, families);
    this.#settings = { trustProxy: options.trustProxy };
    // Outermost first: a cluster's catch-up, then the group's own steps (which see `ctx.retry`), then the handler.
    const routerSteps: RouteStep[] = options.cluster ? [catchUpWith(options.cluster)] : [];
    const familyOf = (route: Route) => groups.groupOf.get(route)?.family?.name;
    const metrics = options.metrics;
    this.#table = new RouteTable(routes, {
      familyOf,
      metricsOf: metrics && ((route, family) => metrics.forRoute(family, route.path)),
      steps: routerSteps,
      groupSteps: (route) => groups.groupOf.get(route)?.steps ?? [],
      index: {
        territories: families.territories(),
        // An open route of a family that owns nothing under a segment never answers there (RouteGroup family).
        fits: (route, segment, count) =>
          route.family === undefined || !families.ownsNothingUnder(route.family, segment, count),
      },
    });
  }

  /**
   * Handles one request; never throws. A handler that answers synchronously gets a synchronous answer:
   * Deno.serve takes a faster path for a Response than for a Promise of one. The synchronous path allocates
   * no closures: this runs once per request and its cost shows directly in requests/s.
   */
  handle(request: Request, remoteAddr: RemoteAddress): Response | Promise<Response> {
    const started = this.#accessLog.now();
    const sequence = nextRequestSequence();
    const method = request.method;
    let path = "";
    let route: CompiledRoute | undefined;
    try {
      const href = request.url;
      let url: URL | undefined;
      const fast = requestPath(href);
      // Should the Host be malformed, the 400 is rendered and logged for the path as sent.
      path = fast ?? rawPath(href);
      this.#hostCheck.check(href);
      if (fast === undefined) {
        url = parseRequestUrl(href);
        path = url.pathname;
        if (path.includes("//")) path = path.replace(/\/{2,}/g, "/");
      }
      const found = this.#table.find(path, method);
      route = found.route;
      const params = found.params;
      const maxBodyBytes = route.maxBodyBytes ?? this.#options.maxBodyBytes;
      const ctx = new Context(request, url, params, sequence, maxBodyBytes, remoteAddr, this.#settings);
      checkBodyLimit(method, request, maxBodyBytes);
      const answer = method === "HEAD" ? route.runHead(ctx) : route.run(ctx);
      const metrics = route.metrics;
      if (answer instanceof Promise) {
        return answer.then(
          (r) => this.#finish(r, path, sequence, method, started, metrics),
          (err) => {
            const failed = this.#failure(err, this.#families.ownerOf(path), sequence);
            return this.#finish(failed, path, sequence, method, started, metrics);
          },
        );
      }
      return this.#finish(answer, path, sequence, method, started, metrics);
    } catch (err) {
      // Failures are rendered in the shape of the family owning the path (looked up only here: errors are rare).
      const family = this.#families.ownerOf(path);
      const response = this.#failure(err, family, sequence);
      // A request no route matched counts as its family's "unmatched", never under its path.
      const metrics = route ? route.metrics : this.#options.metrics?.unmatched(family);
      return this.#finish(response, path, sequence, method, started, metrics);
    }
  }

  #finish(
    response: Response,
    path: string,
    sequence: number,
    method: string,
    started: number,
    metrics: RouteMetrics | undefined,
  ) {
    response = this.#headerGuard.check(response, path, sequence);
    const ended = this.#accessLog.now();
    this.#accessLog.write(sequence, method, path, response.status, started, ended);
    metrics?.record(response.status, ended - started);
    return response;
  }

  /** Renders a failure in the shape of `family` (the path's owner); a failure that is no ApiError is logged. */
  #failure(err: unknown, family: Family, sequence: number): Response {
    const requestId = requestIdOf(sequence);
    const apiError = asApiError(err);
    if (!apiError) {
      this.#options.logger.error("unhandled error", {
        request_id: requestId,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
    }
    return this.#families.render(
      family,
      apiError ?? new ApiError(500, `Internal error (request ${requestId})`),
      requestId,
    );
  }
}
