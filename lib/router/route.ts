// What a route table entry declares (Route), and the compiled form the matcher and the steps work with.

import type { Family, Handler } from "../http.ts";
import type { LiteralSegment, SegmentParam } from "../route_index.ts";
import type { RouteMetrics } from "../metrics/http.ts";

export interface Route {
  method: string | readonly string[];
  /** A URLPattern pathname, e.g. "/v1/auth-methods/:id([^/:]+)\\:authenticate". */
  path: string;
  handler: Handler;
  /** Body limit for this route (default: the server's). Streaming routes enforce their own. */
  maxBodyBytes?: number;
  /**
   * Path parameters that are secrets (upload ids): replaced by "***" in the access log, in every request whose
   * path has this route's shape (lib/secret_paths.ts), whatever its method and answer.
   */
  secretParams?: readonly string[];
  /**
   * On a cluster (RouterOptions `cluster`): answered from this node's view as it is, never first caught up with
   * other nodes' commits — /health, which reports that lag itself and must answer while the database is down.
   */
  localView?: boolean;
  /** On a cluster: a GET, too, catches up before its handler (a GET that writes; pages a person just changed). */
  catchUpFirst?: boolean;
}

/**
 * A step around a route's handler (request → answer), composed once when the router is built: it gets the route
 * and the handler it wraps, and returns that handler itself when it has nothing to do for this route, so a route
 * pays only for the steps that apply to it and no request allocates a closure.
 */
export type RouteStep = (route: CompiledRoute, next: Handler) => Handler;

export interface CompiledRoute extends Route {
  methods: ReadonlySet<string>;
  pattern: URLPattern;
  /** The same pattern as a RegExp when the syntax allows: matched first, being much cheaper. */
  regex: RegExp | undefined;
  /** Names of the regex's parameters, read directly (Object.entries on match groups is slow). */
  paramNames: readonly string[];
  prefix: string;
  /** Its segments when their count is fixed: literal text, or undefined for a parameter (lib/route_index.ts). */
  segments: readonly (string | undefined)[] | undefined;
  /** Literal segments after the first, checked before the pattern is tried (the first is the index's key). */
  literals: readonly LiteralSegment[];
  /** When every parameter is a whole `:name` segment of a fixed-shape pattern: where they are (no RegExp runs). */
  segmentParams: readonly SegmentParam[] | undefined;
  /**
   * One character of the prefix (its last but one: usually the end of its last literal segment) and its code:
   * checked before `startsWith`, which costs ~50 ns a call here while a char code costs a few, so most routes
   * that cannot match are passed over cheaply. Only a pre-filter: a path with this prefix always has this code.
   */
  probeAt: number;
  probeCode: number;
  /** Position in the table: the first matching route wins. */
  order: number;
  /** The family of the module that brought the route, when it declared one (lib/router/families.ts). */
  family: Family | undefined;
  /** What its requests count into, when the router keeps metrics (lib/metrics/http.ts). */
  metrics: RouteMetrics | undefined;
  /** The handler behind every step of the route (composed at startup). */
  run: Handler;
  /** The same for a HEAD request answered by this GET route: the body is dropped (lib/router/steps/head.ts). */
  runHead: Handler;
}
