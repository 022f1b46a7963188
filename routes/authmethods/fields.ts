// Common top-level field rules: name/description, read-only fields, version on create and update.

import { hasControlChars, nowIso } from "./common.ts";
import { fieldError, FieldErrors } from "./errors.ts";

export const maxNameLength = 512;

/** Reads name/description from `body` into `out` (null clears when clearing is allowed). */
export function applyNameDescription(
  body: Record<string, unknown>,
  out: { name?: string; description?: string },
  errors: FieldErrors,
  keys: ReadonlySet<string> = new Set(["name", "description"]),
): void {
  for (const key of ["name", "description"] as const) {
    if (!keys.has(key) || !(key in body)) continue;
    const v = body[key];
    if (v === null) {
      delete out[key];
      continue;
    }
    if (typeof v !== "string") {
      errors.add(key, "Expected a string value.");
      continue;
    }
    const trimmed = v.trim();
    if (trimmed === "") errors.add(key, `Cannot set empty string as ${key}`);
    else if (hasControlChars(trimmed)) errors.add(key, "Must not contain control characters.");
    else if (trimmed.length > (key === "name" ? maxNameLength : 4 * maxNameLength)) {
      errors.add(key, "Value is too long.");
    } else out[key] = trimmed;
  }
}

export function rejectReadOnly(
  body: Record<string, unknown>,
  readOnly: readonly string[],
  errors: FieldErrors,
): void {
  for (const key of readOnly) if (key in body) errors.add(key, "This field is read only.");
}

/** PATCH bodies: read-only keys and keys that are neither read-only nor `allowed` are field errors. */
export function checkPatchKeys(
  body: Record<string, unknown>,
  allowed: readonly string[],
  readOnly: readonly string[],
  errors: FieldErrors,
): void {
  for (const key of Object.keys(body)) {
    if (readOnly.includes(key)) errors.add(key, "This field is read only.");
    else if (!allowed.includes(key)) errors.add(key, "Unknown field.");
  }
}

/**
 * PATCH of a resource under an auth method (an account, a managed group): checkPatchKeys, and `type` and
 * `auth_method_id` may be sent only unchanged.
 */
export function checkChildPatchKeys(
  body: Record<string, unknown>,
  allowed: readonly string[],
  readOnly: readonly string[],
  current: { type: string; auth_method_id: string },
  errors: FieldErrors,
): void {
  checkPatchKeys(body, allowed, readOnly, errors);
  if ("type" in body && body.type !== current.type) errors.add("type", "Cannot modify the resource type.");
  if ("auth_method_id" in body && body.auth_method_id !== current.auth_method_id) {
    errors.add("auth_method_id", "This field is read only.");
  }
}

/** A create body: no read-only key, and `version` absent or 0. */
export function checkCreateKeys(
  body: Record<string, unknown>,
  readOnly: readonly string[],
  errors: FieldErrors,
) {
  rejectReadOnly(body, readOnly, errors);
  checkCreateVersion(body, errors);
}

/** Create: `version` absent or 0. */
export function checkCreateVersion(body: Record<string, unknown>, errors: FieldErrors): void {
  if (!("version" in body) || body.version === 0 || body.version === null) return;
  errors.add("version", "Cannot specify this field in a create request.");
}

/** Update: a positive integer `version`, else 400 with Boundary's message. */
export function requireVersion(
  body: Record<string, unknown>,
  message = "Existing resource version is required for an update.",
): number {
  const v = body.version;
  if (v === undefined || v === null || v === 0) throw fieldError({ name: "version", description: message });
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw fieldError({ name: "version", description: "Must be a positive integer." });
  }
  return v;
}

/**
 * The PATCH field mask: leaf paths present in the body (`attributes.<key>` for attributes), or the
 * `update_mask` query parameter when given. Returns paths; throws 400 for unknown or empty masks.
 */
export function fieldMask(
  url: URL,
  body: Record<string, unknown>,
  validPath: (p: string) => boolean,
): string[] {
  const raw = url.searchParams.get("update_mask");
  let paths: string[];
  if (raw !== null) {
    paths = raw.split(",").map((p) => p.trim()).filter((p) => p !== "");
    if (paths.some((p) => !validPath(p))) {
      throw fieldError({ name: "update_mask", description: "Invalid update mask provided." });
    }
  } else {
    paths = [];
    for (const [k, v] of Object.entries(body)) {
      if (k === "attributes" && v && typeof v === "object" && !Array.isArray(v)) {
        for (const a of Object.keys(v)) paths.push(`attributes.${a}`);
      } else if (validPath(k)) paths.push(k);
    }
  }
  if (paths.length === 0) {
    throw fieldError({ name: "update_mask", description: "No valid fields included in the update mask." });
  }
  return [...new Set(paths)];
}

/** The write of a PATCHed document: stamped with the update time, committed only over the version the client read. */
export function patchWrite<T extends object>(collection: string, id: string, next: T, version: number) {
  return { collection, id, doc: { ...next, updated_time: nowIso() }, ifVersion: version };
}
