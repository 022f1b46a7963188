// Error shape of the box registry (Vagrant Cloud API v1): {"errors": ["..."], "success": false}, with the
// Vagrant Cloud's fixed messages for router-level failures and 406 adding the two-factor delivery methods.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";

export const NOT_FOUND = "Resource not found!";

export function renderRegistryError(error: ApiError, requestId: string): Response {
  const messages = Array.isArray(error.details?.errors)
    ? (error.details.errors as string[])
    : [error.message];
  let errors = messages;
  if (error.status === 404) errors = [NOT_FOUND];
  if (error.status === 405) errors = ["Method not allowed"];
  if (error.status === 400 && error.details?.malformedJson) errors = ["Request body is not valid JSON"];
  if (error.status === 500 && error.message !== smsFailureMessage) {
    errors = [`Internal server error (request ${requestId})`];
  }
  const body: Record<string, unknown> = { errors, success: false };
  if (error.status === 406 && error.details?.two_factor) body.two_factor = error.details.two_factor;
  const headers = new Headers(error.headers);
  if (!headers.has("X-Request-Id")) headers.set("X-Request-Id", requestId);
  return json(body, error.status, headers);
}

export const smsFailureMessage = "The two-factor code could not be sent; try again later";

/** A 422 carrying every problem found, one message each. */
export function unprocessable(errors: string[]): ApiError {
  return new ApiError(422, errors.join("; "), { details: { errors } });
}

export function notFound(): ApiError {
  return new ApiError(404, NOT_FOUND);
}
