// Error shape of the Nomad-shaped family: a bare text/plain message.

import type { ApiError } from "../../lib/errors.ts";
import { text } from "../../lib/http.ts";

export function renderEventsError(error: ApiError, requestId: string): Response {
  let message = error.message;
  if (error.status === 404 && message.startsWith("Not found: ")) message = "404 page not found";
  if (error.status === 413) message = "Request body too large";
  if (error.status === 400 && error.details?.malformedJson) {
    message = `Failed to decode request body: ${message.replace(/^Request body is not valid JSON: /, "")}`;
  }
  // A 503 (storage unreachable) says what to wait for; other server errors never show their message.
  if (error.status >= 500 && error.status !== 503 && !message.includes(requestId)) {
    message = `Internal error (request ${requestId})`;
  }
  return text(message, error.status, error.headers);
}
