// Primitives for validating auth-method attributes: typed readers that record field errors by path.

import { X509Certificate } from "node:crypto";
import type { FieldErrors } from "../errors.ts";
import { type Attrs, isObject } from "../common.ts";

export type { Attrs };

/** What applying an attributes object yields: the new public attributes and the secret changes. */
export interface AttrOutcome {
  attributes: Attrs;
  /** Plaintext secrets to seal (string) or clear (null); absent = unchanged. */
  secrets: Record<string, string | null>;
}

export interface AttrInput {
  mode: "create" | "update";
  /** The stored attributes (empty at create). */
  base: Attrs;
  /** Which secrets the stored method holds. */
  baseSecrets: ReadonlySet<string>;
  /** attributes.<key> → value; `null` means clear. */
  input: Attrs;
  errors: FieldErrors;
}

export const maxStringLength = 8192;
export const maxListLength = 256;

export const path = (key: string) => `attributes.${key}`;

export function readString(v: unknown, key: string, errors: FieldErrors): string | undefined {
  if (typeof v !== "string") {
    errors.add(path(key), "Expected a string value.");
    return undefined;
  }
  if (v.length > maxStringLength) {
    errors.add(path(key), `Value is too long: at most ${maxStringLength} characters.`);
    return undefined;
  }
  return v;
}

export function readBool(v: unknown, key: string, errors: FieldErrors): boolean | undefined {
  if (typeof v !== "boolean") {
    errors.add(path(key), "Expected a boolean value.");
    return undefined;
  }
  return v;
}

export function readUint32(v: unknown, key: string, errors: FieldErrors): number | undefined {
  if (typeof v === "string" && /^\d{1,10}$/.test(v)) v = Number(v);
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    errors.add(path(key), "Must be a non-negative integer (uint32).");
    return undefined;
  }
  return v;
}

export function readStringList(v: unknown, key: string, errors: FieldErrors): string[] | undefined {
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    errors.add(path(key), "Expected a list of strings.");
    return undefined;
  }
  if (v.length > maxListLength || v.some((x: string) => x.length > maxStringLength)) {
    errors.add(path(key), `Too long: at most ${maxListLength} entries of ${maxStringLength} characters.`);
    return undefined;
  }
  return v as string[];
}

/** An http(s) URL with a host; undefined when not. */
export function parseHttpUrl(raw: string): URL | undefined {
  try {
    const u = new URL(raw);
    if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) return undefined;
    return u;
  } catch {
    return undefined;
  }
}

/** Splits a PEM bundle into blocks of `label`; undefined when the text holds something else. */
export function pemBlocks(text: string, label: RegExp): string[] | undefined {
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  const blocks: string[] = [];
  let rest = text;
  for (const m of text.matchAll(re)) {
    if (!label.test(m[1]!)) return undefined;
    blocks.push(m[0]);
    rest = rest.replace(m[0], "");
  }
  return blocks.length && rest.trim() === "" ? blocks : undefined;
}

/** True when every PEM entry parses as an X.509 certificate. */
export function validCertificates(list: string[]): boolean {
  for (const entry of list) {
    const blocks = pemBlocks(entry, /^CERTIFICATE$/);
    if (!blocks) return false;
    for (const b of blocks) {
      try {
        new X509Certificate(b);
      } catch {
        return false;
      }
    }
  }
  return true;
}

/** `from=to` pairs; returns the parsed list or records an error. */
export function parseClaimMaps(
  list: string[],
  key: string,
  allowedTo: readonly string[],
  errors: FieldErrors,
  caseInsensitive: boolean,
): Array<{ from: string; to: string }> | undefined {
  const out: Array<{ from: string; to: string }> = [];
  const seen = new Set<string>();
  for (const entry of list) {
    const i = entry.indexOf("=");
    const from = i < 0 ? "" : entry.slice(0, i).trim();
    let to = i < 0 ? "" : entry.slice(i + 1).trim();
    if (!from || !to) {
      errors.add(path(key), `Invalid map "${entry}": use from=to.`);
      return undefined;
    }
    const match = allowedTo.find((a) => caseInsensitive ? a.toLowerCase() === to.toLowerCase() : a === to);
    if (!match) {
      errors.add(path(key), `Invalid map "${entry}": "${to}" is not one of ${allowedTo.join(", ")}.`);
      return undefined;
    }
    to = match;
    if (seen.has(to)) {
      errors.add(path(key), `Invalid map "${entry}": "${to}" is mapped more than once.`);
      return undefined;
    }
    seen.add(to);
    out.push({ from, to });
  }
  return out;
}

/** Rejects keys not in `known` with Boundary's D13 message; returns false if any was unknown. */
export function rejectUnknown(input: Attrs, known: ReadonlySet<string>, errors: FieldErrors): void {
  for (const key of Object.keys(input)) if (!known.has(key)) errors.add(path(key), "Unknown field.");
}

export function asAttrs(v: unknown): Attrs | undefined {
  return isObject(v) ? v : undefined;
}
