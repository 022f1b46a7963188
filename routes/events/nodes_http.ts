// Request helpers shared by the node and job producers: caller checks, JSON object bodies, Nomad headers.

import type { RequestContext } from "../../lib/http.ts";
import type { AclCaller } from "./acl_types.ts";
import { bodyField } from "./acl_model.ts";
import { decodeObjectBody, nomadJson } from "./acl_http.ts";

export { permissionDenied } from "./acl_state.ts";

/** Who is calling; throws ApiError 403 for an unknown or expired secret. */
export type ResolveCaller = (req: RequestContext) => AclCaller | Promise<AclCaller>;

/** The JSON object body; an empty body is Go's `EOF`, a non-object a decode error. */
export function readObjectBody(req: RequestContext): Promise<Record<string, unknown>> {
  return decodeObjectBody(req);
}

/** A member by exact name, else case-insensitively (Go's decoder matches keys that way). */
export const member = bodyField;

/** A write's answer: compact JSON with X-Nomad-Index. */
export function writeResponse(body: unknown, index: number): Response {
  return nomadJson(body, index, false);
}

/** A read's answer: X-Nomad-Index plus Nomad's leader headers. */
export function readResponse(body: unknown, index: number): Response {
  return nomadJson(body, index, true);
}

/** RFC 3339 in UTC with whole seconds (Nomad's time.Unix(s, 0)). */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** RFC 3339 in UTC with sub-second digits when there are any. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/** Keeps the newest commit index of a collection (including deletions) for list answers' X-Nomad-Index. */
export class TableIndex {
  value = 0;
  bump(index: number): void {
    if (index > this.value) this.value = index;
  }
}
