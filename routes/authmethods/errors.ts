// Error shape of the Boundary-shaped family: {"kind": "...", "message": "...", "details": {...}}.

import type { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";

export function renderAuthError(error: ApiError, requestId: string): Response {
  const { malformedJson: _ignored, ...details } = error.details ?? {};
  let message = error.message;
  if (error.status === 404 && message.startsWith("Not found: ")) message = "Resource not found.";
  if (error.status === 405) message = "Method not allowed.";
  if (error.status >= 500) message = `Internal error (request ${requestId}).`;
  const body: Record<string, unknown> = { kind: error.kind, message };
  if (Object.keys(details).length) body.details = details;
  return json(body, error.status, error.headers);
}
