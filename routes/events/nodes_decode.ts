// Decodes a JSON value against a field layout the way Go's encoding/json fills a struct: known fields in
// declared order with defaults, unknown fields dropped, wrong types → 400 in Go's words.

import { ApiError } from "../../lib/errors.ts";

/** A field layout: scalars, string maps, free values, structs, lists and maps of a layout. */
export type Shape =
  | "string"
  | "bool"
  | "int"
  | "stringMap"
  | "anyMap"
  | "any"
  | { struct: string; fields: readonly Field[] }
  | { list: Shape; goType: string }
  | { mapOf: Shape; goType: string };

/** [name, layout, default when absent or null]. */
export type Field = readonly [string, Shape, unknown];

function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return `number ${v}`;
  return typeof v === "object" ? "object" : typeof v;
}

function goType(shape: Shape): string {
  if (typeof shape === "string") {
    return {
      string: "string",
      bool: "bool",
      int: "int64",
      stringMap: "map[string]string",
      anyMap: "map[string]interface {}",
      any: "interface {}",
    }[shape];
  }
  if ("struct" in shape) return `structs.${shape.struct}`;
  return shape.goType;
}

function typeError(where: string, value: unknown, shape: Shape): ApiError {
  return new ApiError(
    400,
    `Failed to decode request body: json: cannot unmarshal ${
      jsonKind(value)
    } into Go struct field ${where} of type ${goType(shape)}`,
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Looks a field up by exact name first, then case-insensitively (as Go's decoder matches keys). */
function fieldValue(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** Decodes `value` (non-null) against `shape`; `where` names the field for errors (e.g. "Node.Meta"). */
export function decodeShape(shape: Shape, value: unknown, where: string): unknown {
  if (typeof shape === "string") {
    switch (shape) {
      case "string":
        if (typeof value !== "string") throw typeError(where, value, shape);
        return value;
      case "bool":
        if (typeof value !== "boolean") throw typeError(where, value, shape);
        return value;
      case "int":
        // JSON numbers beyond 2^53 have already lost precision; Go's int64 range is what is refused.
        if (typeof value !== "number" || !Number.isInteger(value) || Math.abs(value) > 2 ** 63) {
          throw typeError(where, value, shape);
        }
        return value;
      case "stringMap":
        if (!isObject(value)) throw typeError(where, value, shape);
        for (const v of Object.values(value)) if (typeof v !== "string") throw typeError(where, v, "string");
        return { ...value };
      case "anyMap":
        if (!isObject(value)) throw typeError(where, value, shape);
        return structuredClone(value);
      case "any":
        return structuredClone(value);
    }
  }
  if ("struct" in shape) {
    if (!isObject(value)) throw typeError(where, value, shape);
    return decodeStruct(shape.fields, value, shape.struct);
  }
  if ("list" in shape) {
    if (!Array.isArray(value)) throw typeError(where, value, shape);
    return value.map((v) => (v === null ? null : decodeShape(shape.list, v, where)));
  }
  if (!isObject(value)) throw typeError(where, value, shape);
  // fromEntries defines own keys, so even a "__proto__" key stays data.
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, v === null ? null : decodeShape(shape.mapOf, v, where)]),
  );
}

/** Fills every field of `fields` from `value` in declared order; absent or null fields take their default. */
export function decodeStruct(
  fields: readonly Field[],
  value: Record<string, unknown>,
  struct: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, shape, fallback] of fields) {
    const given = fieldValue(value, name);
    out[name] = given === undefined || given === null
      ? structuredClone(fallback)
      : decodeShape(shape, given, `${struct}.${name}`);
  }
  return out;
}
