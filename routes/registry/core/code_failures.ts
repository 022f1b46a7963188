// The limit on wrong two-factor codes (docs/security.md#throttles), worked out from the times of a user's wrong
// codes kept in a stored document of their own, so that every node of a cluster counts the same guesses.

import type { CodeFailuresDoc } from "./model.ts";

/** Wrong codes of one user that block its code checks while they are within the window. */
export const WRONG_CODES_LIMIT = 10;
/** The sliding window wrong codes are counted over. */
export const WRONG_CODES_WINDOW_MS = 15 * 60_000;

/** The document's wrong-code times still counted at `now` (the window's), oldest first. */
export function recentFailures(doc: CodeFailuresDoc | undefined, now: number): number[] {
  const times = Array.isArray(doc?.failed_at) ? doc.failed_at : [];
  // A time ahead of this node's clock (another node's clock runs ahead) counts as now: it never blocks longer.
  return times.filter((t) => typeof t === "number" && Number.isFinite(t)).map((t) => Math.min(t, now))
    .filter((t) => now - t < WRONG_CODES_WINDOW_MS).sort((a, b) => a - b);
}

/** Milliseconds until the user's codes are checked again after `failures` (oldest first); 0: checked now. */
export function codeCheckWaitMs(failures: readonly number[], now: number): number {
  if (failures.length < WRONG_CODES_LIMIT) return 0;
  return Math.max(0, failures[failures.length - WRONG_CODES_LIMIT]! + WRONG_CODES_WINDOW_MS - now);
}

/** The document with one more wrong code at `now`: the window's times, at most WRONG_CODES_LIMIT of them. */
export function withFailure(doc: CodeFailuresDoc | undefined, now: number): CodeFailuresDoc {
  return { failed_at: [...recentFailures(doc, now), now].slice(-WRONG_CODES_LIMIT) };
}
