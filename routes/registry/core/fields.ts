// Field readers over a request's payload that collect one 422 message per problem.

import { ApiError } from "../../../lib/errors.ts";

export type Payload = Record<string, unknown>;

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
