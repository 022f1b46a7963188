// Matching: the route table compiled once (exact paths, an index by segment count and first segment, RegExps for
// URLPattern syntax), and the route and parameters of a request path, or the 404 / 405 with Allow.

import { ApiError } from "../errors.ts";
import type { Family, Handler } from "../http.ts";
import { compilePathPattern } from "../route_pattern.ts";
import {
  type IndexOptions,
  laterLiterals,
  literalsMatch,
  RouteIndex,
  segmentParams,
  segmentShape,
  segmentValues,
} from "../route_index.ts";
import type { RouteMetrics } from "../metrics/http.ts";
import type { CompiledRoute, Route, RouteStep } from "./route.ts";
import { headFromGet } from "./steps/head.ts";

/** A matched route and its percent-decoded path parameters. */
export interface Match {
  route: CompiledRoute;
  params: Record<string, string>;
}

/** How a table is built: each route's family, and the steps composed around its handler (outermost first). */
export interface TableOptions {
  familyOf(route: Route): Family | undefined;
  /** Around every route's handler. */
  steps: readonly RouteStep[];
  /** Around one route's handler, inside `steps` (its group's). */
  groupSteps(route: Route): readonly RouteStep[];
  index: IndexOptions<CompiledRoute>;
  /** The metrics a route records into (none when the router keeps no metrics). */
  metricsOf?(route: Route, family: Family | undefined): RouteMetrics | undefined;
}

/**
 * How many matched GET paths a table remembers, and the longest it remembers: when full it starts again empty,
 * so a stranger's paths hold a few MB at most (docs/security.md: 2.3 MB measured when full of long paths).
 */
const RECENT_GETS = 4_096;
const RECENT_PATH_CHARS = 256;

export class RouteTable {
  readonly routes: readonly CompiledRoute[];
  /** Matches of recent GET paths with parameters (frozen): a repeated read skips the candidates and their tests. */
  #recentGets = new Map<string, Match>();
  /** Routes without parameters, by exact path: most requests find theirs without running a pattern. */
  #static = new Map<string, CompiledRoute[]>();
  /** The routes that can match a path, by its segment count and first segment. */
  #index: RouteIndex<CompiledRoute>;

  constructor(routes: readonly Route[], options: TableOptions) {
    this.routes = routes.map((r, order) => compile(r, order, options));
    this.#index = new RouteIndex(this.routes, options.index);
    for (const route of this.routes) {
      if (route.prefix !== route.path) continue;
      // Only when no earlier parameterised route could claim this exact path may it skip the table.
      const shadowed = this.routes.some((r) =>
        r.order < route.order && r.prefix !== r.path && route.path.startsWith(r.prefix) &&
        r.pattern.test({ pathname: route.path })
      );
      if (shadowed) continue;
      const list = this.#static.get(route.path) ?? [];
      list.push(route);
      this.#static.set(route.path, list);
    }
  }

  /** The route of a parameterless path, when one answers this method (or GET for HEAD). */
  staticRoute(path: string, method: string): CompiledRoute | undefined {
    const exact = this.#static.get(path);
    if (!exact) return undefined;
    for (const r of exact) if (r.methods.has(method)) return r;
    if (method !== "HEAD") return undefined;
    for (const r of exact) if (r.methods.has("GET")) return r;
    return undefined;
  }

  /**
   * The route and parameters of a request path: a recent GET path's remembered match, else its exact route (for
   * a path without parameters), else the first route of the table that matches; 404/405 (with Allow) when none.
   */
  find(path: string, method: string): Match {
    if (method !== "GET") return this.#lookUp(path, method);
    const recent = this.#recentGets.get(path);
    if (recent) return recent;
    const found = this.#lookUp(path, method);
    if (path.length > RECENT_PATH_CHARS) return found;
    if (this.#recentGets.size >= RECENT_GETS) this.#recentGets.clear();
    const match = { route: found.route, params: Object.freeze(found.params) };
    this.#recentGets.set(path, match);
    return match;
  }

  #lookUp(path: string, method: string): Match {
    const exact = this.staticRoute(path, method);
    return exact ? { route: exact, params: {} } : this.match(path, method);
  }

  /** The first route of the table matching path and method; 404/405 (with Allow) when none does. */
  match(path: string, method: string): Match {
    let allowed: Set<string> | undefined;
    for (const route of this.#index.candidates(path)) {
      if (path.charCodeAt(route.probeAt) !== route.probeCode || !path.startsWith(route.prefix)) continue;
      if (route.literals.length && !literalsMatch(route.literals, path)) continue;
      // Parameters that are whole segments are sliced out of the path; other patterns run their RegExp.
      const groups = route.segmentParams
        ? segmentValues(route.segmentParams, path)
        : matchGroups(route, path);
      if (!groups) continue;
      const wanted = method === "HEAD" && !route.methods.has("HEAD") ? "GET" : method;
      if (!route.methods.has(wanted)) {
        allowed ??= new Set();
        for (const x of route.methods) allowed.add(x);
        continue;
      }
      const params: Record<string, string> = {};
      const names = route.regex ? route.paramNames : Object.keys(groups);
      for (const k of names) {
        const v = groups[k];
        if (v === undefined) continue;
        try {
          params[k] = v.includes("%") ? decodeURIComponent(v) : v;
        } catch {
          throw new ApiError(400, `malformed percent-encoding in path parameter ${k}`);
        }
      }
      return { route, params };
    }
    if (allowed) throw new ApiError(405, "Invalid method", { headers: { Allow: [...allowed].join(", ") } });
    throw new ApiError(404, `Not found: ${path}`);
  }
}

function compile(r: Route, order: number, options: TableOptions): CompiledRoute {
  const regex = compilePathPattern(r.path);
  // Segments are trusted only with an exact RegExp: the segment count of a URLPattern-only route may vary.
  const segments = regex ? segmentShape(r.path) : undefined;
  const prefix = literalPrefix(r.path);
  const family = options.familyOf(r);
  const route: CompiledRoute = {
    ...r,
    ...prefixProbe(prefix),
    methods: new Set(typeof r.method === "string" ? [r.method] : r.method),
    pattern: new URLPattern({ pathname: r.path }),
    regex,
    paramNames: [...r.path.matchAll(/(?<!\\):([A-Za-z_$][A-Za-z0-9_$]*)/g)].map((m) => m[1]!),
    prefix,
    segments,
    literals: laterLiterals(segments),
    segmentParams: segmentParams(r.path, segments),
    order,
    family,
    metrics: options.metricsOf?.(r, family),
    run: r.handler,
    runHead: r.handler,
  };
  const steps = [...options.steps, ...options.groupSteps(r)];
  let run: Handler = r.handler;
  for (let i = steps.length - 1; i >= 0; i--) run = steps[i]!(route, run);
  route.run = run;
  route.runHead = route.methods.has("HEAD") ? run : headFromGet(run);
  return route;
}

function matchGroups(route: CompiledRoute, path: string): Record<string, string | undefined> | undefined {
  if (route.regex) {
    const m = route.regex.exec(path);
    return m ? (m.groups ?? {}) : undefined;
  }
  return route.pattern.exec({ pathname: path })?.pathname.groups;
}

function prefixProbe(prefix: string): { probeAt: number; probeCode: number } {
  // Without a literal prefix the probe is the "/" every request path starts with.
  if (prefix === "") return { probeAt: 0, probeCode: 0x2f };
  const probeAt = Math.max(0, prefix.length - 2);
  return { probeAt, probeCode: prefix.charCodeAt(probeAt) };
}

function literalPrefix(path: string): string {
  const m = /^[^:*(\\{]*/.exec(path);
  return m ? m[0] : "";
}
