// Responses for the hot read routes, built with every header in one plain object: Deno.serve (2.9) then sends
// them on its native path, and a header set afterwards (`response.headers.set`) would take them off it. Names are
// given in lowercase, as they go out on the wire anyway: Deno lowercases each name, and copies it unless it is.

import { jsonText as okJson, type RequestContext, takeAnswerHeaders } from "../../../lib/http.ts";

/** A 200 JSON response with `cacheControl` when given and the headers the steps ask for (X-Request-Id, Vary). */
export function jsonText(ctx: RequestContext, body: string, cacheControl?: string): Response {
  const answerHeaders = takeAnswerHeaders(ctx);
  // Content-Type alone: Deno's fastest path of all.
  if (cacheControl === undefined && answerHeaders === undefined) return okJson(body);
  const headers: Record<string, string> = { "content-type": "application/json", ...answerHeaders };
  if (cacheControl !== undefined) headers["cache-control"] = cacheControl;
  return new Response(body, { headers });
}
