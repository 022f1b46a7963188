// Request step: a request declaring a body over its route's limit is answered 413 before the handler runs.

import { ApiError } from "../../errors.ts";

/**
 * Throws the 413 when `request` (method `method`, read once by the router: Request.method is a getter into the
 * runtime) declares a Content-Length over `limit`. A GET or HEAD is never checked.
 */
export function checkBodyLimit(method: string, request: Request, limit: number): void {
  if (method === "GET" || method === "HEAD") return;
  const declared = request.headers.get("Content-Length");
  if (declared !== null && Number(declared) > limit) {
    throw new ApiError(413, `Request body too large: the limit is ${limit} bytes`);
  }
}
