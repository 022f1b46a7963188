// Responses for the hot read routes. Deno.serve (2.9) sends a Response built with a plain headers object of
// more than one entry through a slower native path than one built with Content-Type alone and given its
// other headers with `headers.set` (measured with wrk): so extra headers are always set afterwards. Names are
// given in lowercase, as they go out on the wire anyway: Deno lowercases each name, and copies it unless it is.

import { jsonText as okJson } from "../../../lib/http.ts";

/** A 200 JSON response (with `cacheControl` when given); the guard adds X-Request-Id. */
export function jsonText(body: string, cacheControl?: string): Response {
  const response = okJson(body);
  if (cacheControl !== undefined) response.headers.set("cache-control", cacheControl);
  return response;
}
