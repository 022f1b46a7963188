// Request helpers shared by the node and job producers: caller checks, JSON object bodies, Nomad headers.

import { ApiError } from "../../lib/errors.ts";
import { readJson, type RequestContext } from "../../lib/http.ts";
import type { AclCaller } from "./acl_types.ts";

/** Who is calling; throws ApiError 403 for an unknown or expired secret. */
export type ResolveCaller = (req: RequestContext) => AclCaller | Promise<AclCaller>;

export const permissionDenied = () => new ApiError(403, "Permission denied");

/** The JSON object body; an empty body is Go's `EOF`, a non-object a decode error. */
export async function readObjectBody(req: RequestContext): Promise<Record<string, unknown>> {
  const body = await readJson(req);
  if (body === undefined) throw new ApiError(400, "Failed to decode request body: EOF");
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    const kind = body === null ? "null" : Array.isArray(body) ? "array" : typeof body;
    throw new ApiError(
      400,
      `Failed to decode request body: json: cannot unmarshal ${kind} into Go value of type object`,
    );
  }
  return body as Record<string, unknown>;
}

/** A member by exact name, else case-insensitively (Go's decoder matches keys that way). */
export function member(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** A write's answer: compact JSON with X-Nomad-Index. */
export function writeResponse(body: unknown, index: number): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { "Content-Type": "application/json", "X-Nomad-Index": String(index) },
  });
}

/** A read's answer: X-Nomad-Index plus Nomad's leader headers. */
export function readResponse(body: unknown, index: number): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: {
      "Content-Type": "application/json",
      "X-Nomad-Index": String(index),
      "X-Nomad-KnownLeader": "true",
      "X-Nomad-LastContact": "0",
    },
  });
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
