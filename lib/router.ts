// The route table: method + URLPattern → handler, with 404/405/413/500 rendered in the shape of the
// API family that owns the path, and one JSON access-log line per request.

import { ApiError } from "./errors.ts";
import type { Family, Handler, RequestContext } from "./http.ts";
import type { Logger } from "./log.ts";
import { randomBase62 } from "./ids.ts";
import { compilePathPattern } from "./route_pattern.ts";

/** Request ids: a per-process random prefix and a counter, unique without a CSPRNG call per request. */
const requestIdPrefix = randomBase62(6);
let requestCounter = 0;
function nextRequestId(): string {
  return requestIdPrefix + (++requestCounter).toString(36).padStart(6, "0");
}

export interface Route {
  method: string | readonly string[];
  /** A URLPattern pathname, e.g. "/v1/auth-methods/:id([^/:]+)\\:authenticate". */
  path: string;
  handler: Handler;
  /** Body limit for this route (default: the server's). Streaming routes enforce their own. */
  maxBodyBytes?: number;
  /** Path parameters that are secrets (upload ids): replaced by "***" in the access log. */
  secretParams?: readonly string[];
}

export type ErrorRenderer = (error: ApiError, requestId: string) => Response;

interface CompiledRoute extends Route {
  methods: ReadonlySet<string>;
  pattern: URLPattern;
  /** The same pattern as a RegExp when the syntax allows: matched first, being much cheaper. */
  regex: RegExp | undefined;
  /** Names of the regex's parameters, read directly (Object.entries on match groups is slow). */
  paramNames: readonly string[];
  prefix: string;
  /** Position in the table: the first matching route wins. */
  order: number;
}

export interface RouterOptions {
  renderers: Record<Family, ErrorRenderer>;
  logger: Logger;
  maxBodyBytes: number;
  trustProxy: boolean;
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

  constructor(routes: readonly Route[], options: RouterOptions) {
    this.#options = options;
    this.#routes = routes.map((r, order) => ({
      ...r,
      methods: new Set(typeof r.method === "string" ? [r.method] : r.method),
      pattern: new URLPattern({ pathname: r.path }),
      regex: compilePathPattern(r.path),
      paramNames: [...r.path.matchAll(/(?<!\\):([A-Za-z_$][A-Za-z0-9_$]*)/g)].map((m) => m[1]!),
      prefix: literalPrefix(r.path),
      order,
    }));
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

  /** Routes without parameters, by exact path: most requests find theirs without running a pattern. */
  #static = new Map<string, CompiledRoute[]>();

  /**
   * Handles one request; never throws. A handler that answers synchronously gets a synchronous answer:
   * Deno.serve takes a faster path for a Response than for a Promise of one.
   */
  handle(request: Request, remoteAddr: string | (() => string)): Response | Promise<Response> {
    const started = performance.now();
    const requestId = nextRequestId();
    let path = "";
    let logPath = "";
    let family: Family = "registry";
    const finish = (response: Response): Response => {
      this.#logAccess(requestId, request.method, logPath, response.status, started);
      return response;
    };
    const fail = (err: unknown): Response => finish(this.#renderFailure(err, family, requestId));
    try {
      let url: URL | undefined;
      path = requestPath(request.url) ?? (url = new URL(request.url)).pathname;
      if (path.includes("//")) path = path.replace(/\/{2,}/g, "/");
      logPath = path;
      family = familyForPath(path);
      const { route, params, allowed } = this.#match(path, request.method);
      if (!route) {
        if (allowed.size > 0) {
          const allow = [...allowed].join(", ");
          throw new ApiError(405, "Invalid method", { headers: { Allow: allow } });
        }
        throw new ApiError(404, `Not found: ${path}`);
      }
      logPath = redactPath(path, params, route.secretParams);
      let ip: string | undefined;
      const trustProxy = this.#options.trustProxy;
      const ctx: RequestContext = {
        request,
        get url() {
          return url ??= new URL(request.url);
        },
        params,
        requestId,
        // Computed on first use: reading the peer address costs a call into the runtime.
        get clientIp() {
          return ip ??= clientIp(
            request,
            typeof remoteAddr === "string" ? remoteAddr : remoteAddr(),
            trustProxy,
          );
        },
        family,
        maxBodyBytes: route.maxBodyBytes ?? this.#options.maxBodyBytes,
      };
      const declared = request.method === "GET" || request.method === "HEAD"
        ? null
        : request.headers.get("Content-Length");
      if (declared !== null && Number(declared) > ctx.maxBodyBytes) {
        throw new ApiError(413, `Request body too large: the limit is ${ctx.maxBodyBytes} bytes`);
      }
      const headOnly = request.method === "HEAD" && !route.methods.has("HEAD");
      const answer = route.handler(ctx);
      if (answer instanceof Promise) {
        return answer.then((r) => finish(headOnly ? withoutBody(r) : r), fail);
      }
      return finish(headOnly ? withoutBody(answer) : answer);
    } catch (err) {
      return fail(err);
    }
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

  #logAccess(requestId: string, method: string, path: string, status: number, started: number): void {
    this.#options.logger.access({
      request_id: requestId,
      method,
      path,
      status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
  }

  #match(path: string, method: string) {
    const allowed = new Set<string>();
    const exact = this.#static.get(path);
    if (exact) {
      const wanted = method === "HEAD" ? "GET" : method;
      const hit = exact.find((r) => r.methods.has(method)) ?? exact.find((r) => r.methods.has(wanted));
      if (hit) return { route: hit, params: {} as Record<string, string>, allowed };
    }
    for (const route of this.#routes) {
      if (!path.startsWith(route.prefix)) continue;
      const groups = matchGroups(route, path);
      if (!groups) continue;
      const wanted = method === "HEAD" && !route.methods.has("HEAD") ? "GET" : method;
      if (!route.methods.has(wanted)) {
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
      return { route, params, allowed };
    }
    return { route: undefined, params: {}, allowed };
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
 * The path of an absolute request URL by string slicing, when it needs no normalisation (no dot segments,
 * percent-escapes or backslashes); undefined means "parse it with URL".
 */
function requestPath(href: string): string | undefined {
  const scheme = href.indexOf("://");
  const start = scheme < 0 ? -1 : href.indexOf("/", scheme + 3);
  if (start < 0) return undefined;
  let end = href.length;
  const query = href.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = href.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  const path = href.slice(start, end);
  return /[.%\\]/.test(path) ? undefined : path;
}

/** The same response without its body (HEAD answered by a GET route). */
function withoutBody(response: Response): Response {
  if (!response.body) return response;
  response.body.cancel().catch(() => {});
  return new Response(null, { status: response.status, headers: response.headers });
}

function literalPrefix(path: string): string {
  const m = /^[^:*(\\{]*/.exec(path);
  return m ? m[0] : "";
}

function redactPath(
  path: string,
  params: Record<string, string>,
  secret: readonly string[] | undefined,
): string {
  if (!secret?.length) return path;
  let out = path;
  for (const name of secret) {
    const v = params[name];
    if (v) out = out.split(encodeURIComponent(v)).join("***").split(v).join("***");
  }
  return out;
}

function clientIp(request: Request, remote: string, trustProxy: boolean): string {
  if (trustProxy) {
    const hop = request.headers.get("X-Forwarded-For")?.split(",")[0]?.trim();
    if (hop) return hop;
  }
  return remote;
}
