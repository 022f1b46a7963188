// The registry's steps around each of its routes' handlers (ApiModule.steps), outermost first: the route's own
// wrapper, X-Request-Id echoed, the caller resolved, maintenance 503, rate limit 429.

import { asApiError } from "../../../lib/store_http.ts";
import { ApiError } from "../../../lib/errors.ts";
import type { Handler, RequestContext } from "../../../lib/http.ts";
import type { RateLimiter } from "../../../lib/rate_limiter.ts";
import type { Route, RouteStep } from "../../../lib/router.ts";
import { rateLimitStep } from "../../../lib/router/steps/rate_limit.ts";
import { resolveCaller } from "./auth.ts";
import type { Caller } from "../core/caller.ts";
import type { Registry } from "../core/registry.ts";
import { maintenanceError } from "../services/tokens.ts";

/** What the registry's steps read from one of its routes. */
export interface RegistryRules {
  /** POST /authenticate: admins may log in during maintenance (checked after the password). */
  login?: boolean;
  /** A root route (/:username/…): a request without a token may carry the web console's session instead. */
  rootPath?: boolean;
  /** Wraps the steps and the handler of the route (a front's page, RFC 6749 errors). */
  wrap?: (handler: Handler) => Handler;
}

/** A route of the registry, as its module declares it. */
export interface RegistryRoute extends Route {
  registry: RegistryRules;
}

const noRules: RegistryRules = {};

/** The rules of a route these steps run around (only the registry's own, which all declare theirs). */
function rulesOf(route: Route): RegistryRules {
  return (route as Partial<RegistryRoute>).registry ?? noRules;
}

/** The caller the caller step resolved for this request (its handler and the steps after it read it). */
export function callerOf(ctx: RequestContext): Caller {
  return ctx.locals as Caller;
}

/** The registry's steps, outermost first. `browserCaller`: the web console's signed-in user, for root routes. */
export function registrySteps(
  reg: Registry,
  limiter: RateLimiter,
  browserCaller?: (ctx: RequestContext) => Caller | undefined,
): RouteStep[] {
  return [
    ownWrapper,
    echoRequestId,
    callerStep(reg, browserCaller),
    maintenanceStep(reg),
    // Per token when one resolved, else per client address (the console's pages share the address's bucket).
    rateLimitStep(limiter, (ctx) => {
      const hash = callerOf(ctx).tokenHash;
      return hash ? `t:${hash}` : `ip:${ctx.clientIp}`;
    }),
  ];
}

/** The route's own wrapper around everything else (so its errors, 429 and 503 included, are in its shape). */
const ownWrapper: RouteStep = (route, next) => rulesOf(route).wrap?.(next) ?? next;

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** X-Request-Id (the client's when sane, else the router's) on answers and client errors. */
const echoRequestId: RouteStep = (_route, next) => (ctx) => {
  const headers = ctx.request.headers;
  // `has` fetches the whole header list from Deno in one call; the gets after it (here, for the token and the
  // origin) then search it in JavaScript. A get first would cost one call per header, and Deno fetches the
  // whole list anyway at the end of a request whose headers were read.
  const given = headers.has("x-request-id") ? headers.get("x-request-id") : null;
  const requestId = given !== null && saneRequestId.test(given) ? given : ctx.requestId;
  try {
    const answer = next(ctx);
    if (answer instanceof Promise) {
      return answer.then((r) => withRequestId(r, requestId), (err) => {
        throw errorWithRequestId(err, requestId);
      });
    }
    return withRequestId(answer, requestId);
  } catch (err) {
    throw errorWithRequestId(err, requestId);
  }
};

function withRequestId(response: Response, requestId: string): Response {
  response.headers.set("x-request-id", requestId);
  return response;
}

/** Client errors carry the echoed X-Request-Id; anything else stays a 500 for the router. */
function errorWithRequestId(thrown: unknown, requestId: string): unknown {
  const err = asApiError(thrown);
  if (!err) return thrown;
  const headers = new Headers(err.headers);
  headers.set("X-Request-Id", requestId);
  return new ApiError(err.status, err.message, {
    kind: err.kind,
    ...(err.details ? { details: err.details } : {}),
    headers,
  });
}

/** Resolves the caller from the request's token (or, on a root route, the console's session) once. */
function callerStep(reg: Registry, browserCaller?: (ctx: RequestContext) => Caller | undefined): RouteStep {
  return (route, next) => {
    const fromPage = rulesOf(route).rootPath ? browserCaller : undefined;
    return (ctx) => {
      let caller = resolveCaller(reg, ctx);
      // Metadata and downloads followed from a web console page carry its session cookie, not a token.
      if (fromPage && !caller.tokenPresent) caller = fromPage(ctx) ?? caller;
      ctx.locals = caller;
      return next(ctx);
    };
  };
}

/** During maintenance only admins are served (login checks it itself, after the password). */
function maintenanceStep(reg: Registry): RouteStep {
  return (route, next) => {
    if (rulesOf(route).login) return next;
    return (ctx) => {
      if (reg.maintenanceEnabled() && !callerOf(ctx).user?.admin) throw maintenanceError();
      return next(ctx);
    };
  };
}
