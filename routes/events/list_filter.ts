// The `filter` query parameter of Nomad's paginated lists (tokens, jobs, nodes): a go-bexpr expression over
// each item as the list renders it; a filter that does not parse, or that fails on an item, is a 400.

import { ApiError } from "../../lib/errors.ts";
import { filterParam, FilterParseError, parseFilter } from "../../lib/bexpr/parse.ts";
import { evaluateFilterOrThrow, FilterEvalError } from "../../lib/bexpr/eval.ts";

/** Keeps the rendered items that match the request's `filter` (all of them when it is absent or empty). */
export function applyListFilter<T extends Record<string, unknown>>(url: URL, items: T[]): T[] {
  const expr = parseListFilter(url);
  if (!expr) return items;
  try {
    return items.filter((item) => evaluateFilterOrThrow(expr, nilAsEmpty(item) as Record<string, unknown>));
  } catch (err) {
    if (!(err instanceof FilterEvalError)) throw err;
    throw new ApiError(400, `failed to read result page: ${err.message}`);
  }
}

function parseListFilter(url: URL) {
  try {
    const raw = filterParam(url);
    // Nomad reads an empty `filter` as no filter.
    return raw === null || raw === "" ? undefined : parseFilter(raw);
  } catch (err) {
    if (!(err instanceof FilterParseError)) throw err;
    throw new ApiError(
      400,
      `failed to create result paginator: failed to read filter expression: ${err.message}`,
    );
  }
}

/**
 * The item as go-bexpr sees Nomad's Go value: a null in the rendered JSON is a nil slice, map or pointer, and
 * go-bexpr finds nil slices and maps empty (`contains` false, `is empty` true, `any` false), so null reads as [].
 */
function nilAsEmpty(v: unknown): unknown {
  if (v === null) return [];
  if (Array.isArray(v)) return v.map(nilAsEmpty);
  if (typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nilAsEmpty(x)]));
}
