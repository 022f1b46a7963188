// Request bodies (docs/security.md#request-bodies): empty is {}, JSON whatever the Content-Type, the resource
// member unwrapped when it is an object (the field readers are core/fields.ts).

import { ApiError } from "../../../lib/errors.ts";
import { BodyCutShort, readJson } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import type { Payload } from "../core/fields.ts";

function isObject(v: unknown): v is Payload {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The whole body as an object (400 when it is not one). */
export async function readBodyObject(req: Req): Promise<Payload> {
  let parsed: unknown;
  try {
    // The route's limit (WHARF_MAX_BODY_BYTES unless the route sets its own), however the body is sent.
    parsed = await readJson(req.ctx);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && !(err instanceof BodyCutShort)) {
      throw new ApiError(400, "Request body is not valid JSON");
    }
    throw err;
  }
  if (parsed === undefined) return {};
  if (!isObject(parsed)) throw new ApiError(400, "Request body is not valid JSON");
  return parsed;
}

/** The payload of a resource body: `body[member]` when that is an object, else the whole body. */
export async function readPayload(req: Req, member: string): Promise<Payload> {
  return unwrap(await readBodyObject(req), member);
}

export function unwrap(body: Payload, member: string): Payload {
  const inner = body[member];
  return isObject(inner) ? inner : body;
}

export function member(body: Payload, key: string): Payload {
  const v = body[key];
  return isObject(v) ? v : {};
}
