// Request/response helpers shared by the ACL endpoints: body decoding in Nomad's words, index headers.

import { ApiError } from "../../lib/errors.ts";
import { readJson, type RequestContext } from "../../lib/http.ts";
import type { AclState } from "./acl_state.ts";

/** 400 `ACL support disabled` when WHARF_ACL_ENABLED=false. */
export function requireAclsEnabled(acl: AclState): void {
  if (!acl.enabled) throw new ApiError(400, "ACL support disabled");
}

/** The JSON object body; an empty body is `EOF` and a non-object is a decode error, as in Nomad. */
export async function decodeObjectBody(
  req: RequestContext,
  optional = false,
): Promise<Record<string, unknown>> {
  const body = await readJson(req);
  if (body === undefined) {
    if (optional) return {};
    throw new ApiError(400, "Failed to decode request body: EOF");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(
      400,
      `Failed to decode request body: json: cannot unmarshal ${jsonKind(body)} into Go value of type object`,
    );
  }
  return body as Record<string, unknown>;
}

export function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v === "object" ? "object" : typeof v;
}

/** A decode error for a field of the wrong JSON type. */
export function fieldTypeError(struct: string, field: string, value: unknown, goType: string): ApiError {
  return new ApiError(
    400,
    `Failed to decode request body: json: cannot unmarshal ${
      jsonKind(value)
    } into Go struct field ${struct}.${field} of type ${goType}`,
  );
}

export function optionalString(struct: string, field: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw fieldTypeError(struct, field, v, "string");
  return v;
}

export function optionalBool(struct: string, field: string, v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw fieldTypeError(struct, field, v, "bool");
  return v;
}

export function optionalStrings(struct: string, field: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw fieldTypeError(struct, field, v, "[]string");
  for (const x of v) if (typeof x !== "string") throw fieldTypeError(struct, field, x, "string");
  return v as string[];
}

/** Headers of a read: the index plus Nomad's leader headers. */
export function readHeaders(index: number): HeadersInit {
  return {
    "X-Nomad-Index": String(index),
    "X-Nomad-KnownLeader": "true",
    "X-Nomad-LastContact": "0",
  };
}

export function nomadJson(body: unknown, index: number, read: boolean): Response {
  const headers = new Headers(read ? readHeaders(index) : { "X-Nomad-Index": String(index) });
  headers.set("Content-Type", "application/json");
  return new Response(JSON.stringify(body), { status: 200, headers });
}

export function emptyOk(index: number): Response {
  return new Response(null, { status: 200, headers: { "X-Nomad-Index": String(index) } });
}
