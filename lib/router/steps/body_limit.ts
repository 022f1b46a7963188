// Route step: a request declaring a body over its route's limit is answered 413 before the handler runs.

import { ApiError } from "../../errors.ts";
import type { Handler } from "../../http.ts";
import type { RouteStep } from "../route.ts";

/** Only for routes that take a method with a body: a GET or HEAD is never checked. */
export const bodyLimit: RouteStep = (route, next) => {
  for (const method of route.methods) {
    if (method !== "GET" && method !== "HEAD") return checked(next);
  }
  return next;
};

function checked(next: Handler): Handler {
  return (ctx) => {
    const method = ctx.request.method;
    if (method !== "GET" && method !== "HEAD") {
      const declared = ctx.request.headers.get("Content-Length");
      if (declared !== null && Number(declared) > ctx.maxBodyBytes) {
        throw new ApiError(413, `Request body too large: the limit is ${ctx.maxBodyBytes} bytes`);
      }
    }
    return next(ctx);
  };
}
