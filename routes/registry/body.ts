// Request bodies (§6.1): empty is {}, JSON whatever the Content-Type, the resource member unwrapped when it
// is an object; field readers that collect one message per problem.

import { ApiError } from "../../lib/errors.ts";
import { readJson } from "../../lib/http.ts";
import type { Req } from "./auth.ts";

export type Payload = Record<string, unknown>;

const JSON_LIMIT = 1024 * 1024;

function isObject(v: unknown): v is Payload {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The whole body as an object (400 when it is not one). */
export async function readBodyObject(req: Req): Promise<Payload> {
  let parsed: unknown;
  try {
    parsed = await readJson(req.ctx, JSON_LIMIT);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) {
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

/** Collects 422 messages while reading fields. */
export class FieldErrors {
  readonly messages: string[] = [];

  add(message: string): void {
    this.messages.push(message);
  }

  /** absent → undefined, null → null, a string → it (checked against `max` characters). */
  text(body: Payload, key: string, label: string, max?: number): string | null | undefined {
    if (!(key in body) || body[key] === undefined) return undefined;
    const v = body[key];
    if (v === null) return null;
    if (typeof v !== "string") {
      this.add(`${label} must be a string`);
      return undefined;
    }
    if (max !== undefined && v.length > max) {
      this.add(`${label} is too long (maximum is ${max} characters)`);
      return undefined;
    }
    return v;
  }

  /** A required string: absent, null or blank adds "<label> can't be blank". */
  required(body: Payload, key: string, label: string, max?: number): string | undefined {
    const v = this.text(body, key, label, max);
    if (v === undefined && key in body && body[key] !== null) return undefined;
    if (v === undefined || v === null || v.trim() === "") {
      this.add(`${label} can't be blank`);
      return undefined;
    }
    return v;
  }

  bool(body: Payload, key: string, label: string): boolean | null | undefined {
    if (!(key in body) || body[key] === undefined) return undefined;
    const v = body[key];
    if (v === null) return null;
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "1" || v === 1) return true;
    if (v === "false" || v === "0" || v === 0) return false;
    this.add(`${label} must be true or false`);
    return undefined;
  }

  throwIfAny(): void {
    if (this.messages.length) {
      throw new ApiError(422, this.messages.join("; "), { details: { errors: this.messages } });
    }
  }
}
