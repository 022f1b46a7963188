// The route table: method + URLPattern → handler, with 404/405/413/500 rendered in the shape of the
// API family that owns the path, and one JSON access-log line per request.

import { ApiError } from "./errors.ts";
import { type Family, type Handler, parseRequestUrl, type RequestContext, validHost } from "./http.ts";
import type { Logger } from "./log.ts";
import { nextRequestSequence, requestIdOf } from "./request_id.ts";
import { compilePathPattern } from "./route_pattern.ts";
import {
  laterLiterals,
  type LiteralSegment,
  literalsMatch,
  RouteIndex,
  segmentShape,
} from "./route_index.ts";
import { SecretPathRedactor } from "./secret_paths.ts";
import { refusedHeader } from "./header_values.ts";

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

/** The peer address of a request: given, computed on demand, or read from Deno.serve's handler info. */
export type RemoteAddress = string | (() => string) | { readonly remoteAddr: Deno.Addr };

export type ErrorRenderer = (error: ApiError, requestId: string) => Response;

interface CompiledRoute extends Route {
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
  /**
   * One character of the prefix (its last but one: usually the end of its last literal segment) and its code:
   * checked before `startsWith`, which costs ~50 ns a call here while a char code costs a few, so most routes
   * that cannot match are passed over cheaply. Only a pre-filter: a path with this prefix always has this code.
   */
  probeAt: number;
  probeCode: number;
  /** Position in the table: the first matching route wins. */
  order: number;
}

export interface RouterOptions {
  renderers: Record<Family, ErrorRenderer>;
  logger: Logger;
  maxBodyBytes: number;
  trustProxy: boolean;
  /** Present on a cluster: how a request sees what other nodes committed before it arrived. */
  cluster?: ClusterView;
}

/**
 * A node's view of a cluster's commits. A write (any method but GET and HEAD) first catches up with every commit
 * acknowledged anywhere before it arrived, so it acts on what its client saw; a GET or HEAD is answered from the
 * view at once (reads cost no database round trip) and only a miss (401, 403, 404) catches up and, when the view
 * moved, is answered again: a client behind a load balancer finds what it just created on another node. A GET
 * may still show an older state of something that exists for the few milliseconds a commit takes to reach every
 * node (docs/scale-out.md).
 */
export interface ClusterView {
  /** Resolves once the view includes every commit acknowledged before the call; never rejects. */
  sync(): Promise<void>;
  /** The view's newest applied Index. */
  index(): number;
}

/** Answers that may come from a view behind another node's commit: a GET answered so is asked again. */
function isMiss(status: number): boolean {
  return status === 404 || status === 401 || status === 403;
}

/** Which family owns a path (ARCHITECTURE.md, "Who owns a path"). */
export function familyForPath(path: string): Family {
  if (path.startsWith("/api/v1/") || path === "/api/v1") return "registry";
  if (/^\/v1\/(auth-methods|scopes|accounts|users|auth-tokens)(\/|:|$)/.test(path)) return "auth";
  if (path.startsWith("/v1/") || path === "/v1") return "events";
  if (path === "/health" || path === "/authentication-complete" || path === "/authentication-error") {
    return "server";
  }
  return "registry";
}

export class Router {
  #routes: CompiledRoute[];
  #options: RouterOptions;
  #logger: Logger;
  /** Whether requests are timed: only for the access log (each clock read costs ~0.15 µs here). */
  #timed: boolean;

  constructor(routes: readonly Route[], options: RouterOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#timed = options.logger.logsAccess;
    this.#routes = routes.map((r, order) => {
      const regex = compilePathPattern(r.path);
      // Segments are trusted only with an exact RegExp: the segment count of a URLPattern-only route may vary.
      const segments = regex ? segmentShape(r.path) : undefined;
      return {
        ...r,
        ...prefixProbe(literalPrefix(r.path)),
        methods: new Set(typeof r.method === "string" ? [r.method] : r.method),
        pattern: new URLPattern({ pathname: r.path }),
        regex,
        paramNames: [...r.path.matchAll(/(?<!\\):([A-Za-z_$][A-Za-z0-9_$]*)/g)].map((m) => m[1]!),
        prefix: literalPrefix(r.path),
        segments,
        literals: laterLiterals(segments),
        order,
      };
    });
    this.#index = new RouteIndex(this.#routes);
    this.#secretPaths = new SecretPathRedactor(routes);
    for (const route of this.#routes) {
      if (route.prefix !== route.path) continue;
      // Only when no earlier parameterised route could claim this exact path may it skip the table.
      const shadowed = this.#routes.some((r) =>
        r.order < route.order && r.prefix !== r.path && route.path.startsWith(r.prefix) &&
        r.pattern.test({ pathname: route.path })
      );
      if (shadowed) continue;
      const list = this.#static.get(route.path) ?? [];
      list.push(route);
      this.#static.set(route.path, list);
    }
  }

  #secretPaths: SecretPathRedactor;

  /** Routes without parameters, by exact path: most requests find theirs without running a pattern. */
  #static = new Map<string, CompiledRoute[]>();

  /** The routes that can match a path, by its segment count and first segment, in table order. */
  #index: RouteIndex<CompiledRoute>;

  /**
   * Handles one request; never throws. A handler that answers synchronously gets a synchronous answer:
   * Deno.serve takes a faster path for a Response than for a Promise of one. The synchronous path allocates
   * no closures: this runs once per request and its cost shows directly in requests/s.
   */
  handle(request: Request, remoteAddr: RemoteAddress): Response | Promise<Response> {
    const started = this.#timed ? performance.now() : 0;
    const sequence = nextRequestSequence();
    const method = request.method;
    let path = "";
    let logPath = "";
    try {
      const href = request.url;
      let url: URL | undefined;
      const fast = requestPath(href);
      // Should the Host be malformed, the 400 is rendered and logged for the path as sent.
      path = fast ?? rawPath(href);
      if (fast === undefined) logPath = this.#secretPaths.redact(path);
      this.#checkHost(href);
      if (fast === undefined) {
        url = parseRequestUrl(href);
        path = url.pathname;
        if (path.includes("//")) path = path.replace(/\/{2,}/g, "/");
      }
      logPath = this.#secretPaths.redact(path);
      let route = this.#staticRoute(path, method);
      let params: Record<string, string> = {};
      if (!route) ({ route, params } = this.#match(path, method));
      const maxBodyBytes = route.maxBodyBytes ?? this.#options.maxBodyBytes;
      const trustProxy = this.#options.trustProxy;
      const ctx = new Context(request, url, params, sequence, path, maxBodyBytes, remoteAddr, trustProxy);
      if (method !== "GET" && method !== "HEAD") {
        const declared = request.headers.get("Content-Length");
        if (declared !== null && Number(declared) > ctx.maxBodyBytes) {
          throw new ApiError(413, `Request body too large: the limit is ${ctx.maxBodyBytes} bytes`);
        }
      }
      const headOnly = method === "HEAD" && !route.methods.has("HEAD");
      const cluster = this.#options.cluster;
      const answer = cluster && !route.localView
        ? answerCaughtUp(
          cluster,
          route,
          ctx,
          () => new Context(request, url, params, sequence, path, maxBodyBytes, remoteAddr, trustProxy),
        )
        : route.handler(ctx);
      if (answer instanceof Promise) {
        return answer.then(
          (r) => this.#finish(headOnly ? withoutBody(r) : r, sequence, method, logPath, started),
          (err) => this.#fail(err, path, sequence, method, logPath, started),
        );
      }
      return this.#finish(headOnly ? withoutBody(answer) : answer, sequence, method, logPath, started);
    } catch (err) {
      return this.#fail(err, path, sequence, method, logPath, started);
    }
  }

  /** The Host of the last request whose Host was valid: most requests name the same one. */
  #validHost = "";

  /**
   * A Host header that no URL can hold (`x:99999`, `a b`, `%`) is answered 400, as HTTP requires, before any
   * handler builds a URL from it. Deno puts the Host into the request URL; the last valid one is remembered, so a
   * request naming it again costs one comparison.
   */
  #checkHost(href: string): void {
    const from = href.indexOf("://") + 3;
    const last = this.#validHost;
    const after = from + last.length;
    if (
      last !== "" && href.startsWith(last, from) && (after === href.length || href.charCodeAt(after) === 0x2f)
    ) {
      return;
    }
    const end = href.indexOf("/", from);
    const host = href.slice(from, end < 0 ? href.length : end);
    if (!validHost(host)) throw new ApiError(400, "Malformed Host header");
    this.#validHost = host;
  }

  #finish(response: Response, sequence: number, method: string, path: string, started: number): Response {
    // The last guard: a header value Deno would refuse ends the process, so it never leaves (docs/security.md).
    const refused = refusedHeader(response.headers);
    if (refused !== undefined) response = this.#refuseResponse(response, refused, path, sequence);
    const ended = this.#timed ? performance.now() : 0;
    this.#logger.access(sequence, method, path, response.status, started, ended);
    return response;
  }

  /** A 500 in the family's shape instead of a response with a header Deno would refuse; the body is dropped. */
  #refuseResponse(response: Response, header: string, path: string, sequence: number): Response {
    response.body?.cancel().catch(() => {});
    const requestId = requestIdOf(sequence);
    this.#options.logger.error("response refused: a header value holds a control character", {
      request_id: requestId,
      header,
      status: response.status,
    });
    return this.#options.renderers[familyForPath(path)](
      new ApiError(500, `Internal error (request ${requestId})`),
      requestId,
    );
  }

  /** Renders a failure in the shape of the family owning `path` (looked up only here: errors are rare). */
  #fail(err: unknown, path: string, sequence: number, method: string, logPath: string, started: number) {
    const response = this.#renderFailure(err, familyForPath(path), requestIdOf(sequence));
    return this.#finish(response, sequence, method, logPath, started);
  }

  #renderFailure(err: unknown, family: Family, requestId: string): Response {
    const apiError = err instanceof ApiError ? err : undefined;
    if (!apiError) {
      this.#options.logger.error("unhandled error", {
        request_id: requestId,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
    }
    return this.#options.renderers[family](
      apiError ?? new ApiError(500, `Internal error (request ${requestId})`),
      requestId,
    );
  }

  /** The route of a parameterless path, when one answers this method (or GET for HEAD). */
  #staticRoute(path: string, method: string): CompiledRoute | undefined {
    const exact = this.#static.get(path);
    if (!exact) return undefined;
    for (const r of exact) if (r.methods.has(method)) return r;
    if (method !== "HEAD") return undefined;
    for (const r of exact) if (r.methods.has("GET")) return r;
    return undefined;
  }

  /** The first route of the table matching path and method; 404/405 (with Allow) when none does. */
  #match(path: string, method: string): { route: CompiledRoute; params: Record<string, string> } {
    let allowed: Set<string> | undefined;
    for (const route of this.#index.candidates(path)) {
      if (path.charCodeAt(route.probeAt) !== route.probeCode || !path.startsWith(route.prefix)) continue;
      if (route.literals.length && !literalsMatch(route.literals, path)) continue;
      const groups = matchGroups(route, path);
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

function matchGroups(route: CompiledRoute, path: string): Record<string, string | undefined> | undefined {
  if (route.regex) {
    const m = route.regex.exec(path);
    return m ? (m.groups ?? {}) : undefined;
  }
  return route.pattern.exec({ pathname: path })?.pathname.groups;
}

/**
 * The path of an absolute request URL, in one pass over its characters, when it needs no normalisation (no
 * dot segments, percent-escapes or backslashes); runs of "/" are collapsed. Undefined means "parse it with
 * URL". This runs once per request: one scan and one slice instead of several searches and a regex.
 */
function requestPath(href: string): string | undefined {
  const scheme = href.indexOf("://");
  const start = scheme < 0 ? -1 : href.indexOf("/", scheme + 3);
  if (start < 0) return undefined;
  let end = href.length;
  let doubled = false;
  for (let i = start + 1; i < end; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x3f || c === 0x23) end = i; // "?" or "#": the path ends here
    else if (c === 0x2e || c === 0x25 || c === 0x5c) return undefined; // ".", "%", "\\"
    else if (c === 0x2f && href.charCodeAt(i - 1) === 0x2f) doubled = true;
  }
  const path = href.slice(start, end);
  return doubled ? path.replace(/\/{2,}/g, "/") : path;
}

/** The path of a request URL as sent, without parsing it (for an error's family when it does not parse). */
function rawPath(href: string): string {
  const scheme = href.indexOf("://");
  const start = scheme < 0 ? -1 : href.indexOf("/", scheme + 3);
  if (start < 0) return "/";
  const end = href.slice(start).search(/[?#]/);
  return end < 0 ? href.slice(start) : href.slice(start, start + end);
}

/** The same response without its body (HEAD answered by a GET route). */
function withoutBody(response: Response): Response {
  if (!response.body) return response;
  response.body.cancel().catch(() => {});
  return new Response(null, { status: response.status, headers: response.headers });
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

/**
 * What a handler receives. A class rather than an object literal: the lazy url/clientIp getters live on the
 * prototype instead of being two new closures per request.
 */
class Context implements RequestContext {
  #sequence: number;
  #requestId: string | undefined;
  #path: string;
  #family: Family | undefined;
  #url: URL | undefined;
  #ip: string | undefined;
  #remoteAddr: RemoteAddress;
  #trustProxy: boolean;
  retry = false;

  constructor(
    public request: Request,
    url: URL | undefined,
    public params: Record<string, string>,
    sequence: number,
    path: string,
    public maxBodyBytes: number,
    remoteAddr: RemoteAddress,
    trustProxy: boolean,
  ) {
    this.#sequence = sequence;
    this.#path = path;
    this.#url = url;
    this.#remoteAddr = remoteAddr;
    this.#trustProxy = trustProxy;
  }

  /** Built on first use: most requests never show their id. */
  get requestId(): string {
    return this.#requestId ??= requestIdOf(this.#sequence);
  }

  /** Which family owns the path: computed on first use (few handlers ask). */
  get family(): Family {
    return this.#family ??= familyForPath(this.#path);
  }

  get url(): URL {
    return this.#url ??= parseRequestUrl(this.request.url);
  }

  /** Computed on first use: reading the peer address costs a call into the runtime. */
  get clientIp(): string {
    if (this.#ip === undefined) {
      const from = this.#remoteAddr;
      const remote = typeof from === "string"
        ? from
        : typeof from === "function"
        ? from()
        : (from.remoteAddr as Deno.NetAddr).hostname ?? "";
      this.#ip = clientIp(this.request, remote, this.#trustProxy);
    }
    return this.#ip;
  }
}

function clientIp(request: Request, remote: string, trustProxy: boolean): string {
  if (trustProxy) {
    const hop = request.headers.get("X-Forwarded-For")?.split(",")[0]?.trim();
    if (hop) return hop;
  }
  return remote;
}

/**
 * Runs `route` for a request on a cluster (ClusterView): a write after catching up; a read at once, and once
 * more on a fresh context when it missed (answered or threw 401, 403, 404) and catching up moved the view.
 */
function answerCaughtUp(
  cluster: ClusterView,
  route: Route,
  ctx: Context,
  freshContext: () => Context,
): Response | Promise<Response> {
  const method = ctx.request.method;
  if ((method !== "GET" && method !== "HEAD") || route.catchUpFirst) {
    return cluster.sync().then(() => route.handler(ctx));
  }
  const seen = cluster.index();
  let answer: Response | Promise<Response>;
  try {
    answer = route.handler(ctx);
  } catch (error) {
    if (isMissError(error)) return answerAgain(cluster, seen, { error }, route, freshContext);
    throw error;
  }
  if (answer instanceof Promise) {
    return answer.then(
      (r) => isMiss(r.status) ? answerAgain(cluster, seen, { answer: r }, route, freshContext) : r,
      (error) =>
        isMissError(error)
          ? answerAgain(cluster, seen, { error }, route, freshContext)
          : Promise.reject(error),
    );
  }
  return isMiss(answer.status) ? answerAgain(cluster, seen, { answer }, route, freshContext) : answer;
}

function isMissError(error: unknown): boolean {
  return error instanceof ApiError && isMiss(error.status);
}

/** A read that missed at view Index `seen`: the same miss when catching up did not move the view, else rerun. */
async function answerAgain(
  cluster: ClusterView,
  seen: number,
  missed: { answer: Response } | { error: unknown },
  route: Route,
  freshContext: () => Context,
): Promise<Response> {
  await cluster.sync();
  if (cluster.index() === seen) {
    if ("error" in missed) throw missed.error;
    return missed.answer;
  }
  if ("answer" in missed) await missed.answer.body?.cancel();
  const ctx = freshContext();
  ctx.retry = true;
  return await route.handler(ctx);
}
