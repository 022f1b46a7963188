// Error shape of the box registry (Vagrant Cloud API v1): {"errors": ["..."], "success": false}.

import type { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";

export function renderRegistryError(error: ApiError, requestId: string): Response {
  let message = error.message;
  if (error.status === 404 && message.startsWith("Not found: ")) message = "Resource not found!";
  if (error.status === 405) message = "Method not allowed";
  if (error.status >= 500) message = `Internal error (request ${requestId})`;
  return json({ errors: [message], success: false }, error.status, error.headers);
}
