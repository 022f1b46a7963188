// Error shape of the Boundary-shaped family: {"kind": "...", "message": "...", "details": {...}}.

import { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import { VersionConflictError } from "../../lib/store/mod.ts";

/** Kinds outside lib/errors' vocabulary (Boundary's list-token kind) travel in details.kindOverride. */
export function renderAuthError(error: ApiError, requestId: string): Response {
  const { malformedJson, kindOverride, publicMessage, ...details } = error.details ?? {};
  let kind: string = typeof kindOverride === "string" ? kindOverride : error.kind;
  let message = error.message;
  if (error.status === 404 && message.startsWith("Not found: ")) message = "Not Found";
  if (error.status === 405) {
    kind = "Unimplemented";
    message = "Method not allowed.";
  }
  if (error.status === 413) message = "Error in provided request: the request body is too large.";
  if (malformedJson || message.startsWith("Request body is not valid")) {
    message = "Error in provided request.";
  }
  if (error.status >= 500 && error.status !== 503 && !publicMessage) {
    message = `Internal error (request ${requestId}).`;
  }
  const body: Record<string, unknown> = { kind, message };
  if (Object.keys(details).length) body.details = details;
  const status = error.status === 413 ? 400 : error.status;
  return json(body, status, error.headers);
}

export interface FieldProblem {
  name: string;
  description: string;
}

/** A 400 InvalidArgument naming the fields at fault, sorted by name as Boundary does. */
export function fieldError(
  problems: FieldProblem[] | FieldProblem,
  message = "Error in provided request.",
): ApiError {
  const list = (Array.isArray(problems) ? problems : [problems]).slice().sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
  return new ApiError(400, message, { details: { request_fields: list } });
}

/** Collects field problems while validating a whole body, then throws them together. */
export class FieldErrors {
  readonly problems: FieldProblem[] = [];
  add(name: string, description: string): void {
    if (!this.problems.some((p) => p.name === name)) this.problems.push({ name, description });
  }
  has(name: string): boolean {
    return this.problems.some((p) => p.name === name);
  }
  get empty(): boolean {
    return this.problems.length === 0;
  }
  throwIfAny(message?: string): void {
    if (this.problems.length) throw fieldError(this.problems, message);
  }
}

export const notFound = () => new ApiError(404, "Resource not found.");
export const unauthenticated = () => new ApiError(401, "Unauthenticated, or invalid token.");
export const forbidden = () => new ApiError(403, "Forbidden.");
export const failedPrecondition = (message: string) =>
  new ApiError(400, message, { kind: "FailedPrecondition" });
export const invalidListToken = (message: string) =>
  new ApiError(400, message, { details: { kindOverride: "invalid list token" } });
export const versionMismatch = (sent: number, current: number) =>
  new ApiError(409, `Version mismatch: request has version ${sent}, current version is ${current}.`);

/** A commit of `ifVersion` writes: the store's version conflict becomes the 409 naming both versions. */
export async function versioned<T>(commit: Promise<T>): Promise<T> {
  try {
    return await commit;
  } catch (err) {
    if (err instanceof VersionConflictError) throw versionMismatch(err.expected, err.current);
    throw err;
  }
}
