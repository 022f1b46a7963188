// Route step: a request over its client's rate (lib/rate_limiter.ts) is answered 429 with Retry-After.

import { ApiError } from "../../errors.ts";
import type { RequestContext } from "../../http.ts";
import type { RateLimiter } from "../../rate_limiter.ts";
import type { RouteStep } from "../route.ts";

/**
 * Takes one token from `limiter` for the key `keyOf` gives each request, before the steps after it run. A request
 * answered a second time (`ctx.retry`: lib/router/steps/cluster.ts) was counted the first time. Composed away
 * when the limiter is off.
 */
export function rateLimitStep(limiter: RateLimiter, keyOf: (ctx: RequestContext) => string): RouteStep {
  return (_route, next) => {
    if (!limiter.enabled) return next;
    return (ctx) => {
      if (!ctx.retry) takeOrRefuse(limiter, keyOf(ctx));
      return next(ctx);
    };
  };
}

/** Takes one token for `key`; throws the 429 (with Retry-After, in seconds) when there is none. */
export function takeOrRefuse(limiter: RateLimiter, key: string): void {
  const retry = limiter.take(key);
  if (retry > 0) {
    throw new ApiError(429, `Rate limit exceeded; retry in ${retry} s`, {
      headers: { "Retry-After": String(retry) },
    });
  }
}
