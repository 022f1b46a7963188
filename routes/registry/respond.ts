// Responses for the hot read routes: headers as a plain object with X-Request-Id included up front, so the
// request-id wrapper need not mutate the response's headers afterwards.

import type { Req } from "./auth.ts";

/** Responses that already carry the echoed X-Request-Id. */
const tagged = new WeakSet<Response>();

export function carriesRequestId(response: Response): boolean {
  return tagged.has(response);
}

export function markCarriesRequestId(response: Response): void {
  tagged.add(response);
}

/** A 200 JSON response with X-Request-Id (and `cacheControl` when given). */
export function jsonText(req: Req, body: string, cacheControl?: string): Response {
  const headers: Record<string, string> = cacheControl === undefined
    ? { "Content-Type": "application/json", "X-Request-Id": req.requestId }
    : { "Content-Type": "application/json", "Cache-Control": cacheControl, "X-Request-Id": req.requestId };
  const response = new Response(body, { headers });
  tagged.add(response);
  return response;
}
