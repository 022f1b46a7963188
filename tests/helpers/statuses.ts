// Counting HTTP answers by status, for tests that send many requests at once and check how many got each.

/** How many answers had each status, e.g. {401: 5, 429: 35}. */
export function tally(answers: readonly { status: number }[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}
