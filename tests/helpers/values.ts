// JSON-like values for comparisons in tests: a copy without the members that move on their own.

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
