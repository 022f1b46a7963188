// JSON-like values for comparisons in tests: an answer's body read as JSON, a copy without the members that move
// on their own.

/** A deep copy of `value` without any object member named in `keys` (at any depth, also inside arrays). */
export function withoutKeys(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutKeys(item, keys));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!keys.has(k)) out[k] = withoutKeys(v, keys);
    return out;
  }
  return value;
}

/** `text` parsed as JSON; undefined when it is empty or not JSON (the caller keeps the text). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
