// The text of one access-log line, shared by the test sink and the stderr sink's fallback for escaped values.

/** One access-log line (the stderr sink's byte writer produces exactly the same text for plain values). */
export function formatAccessLine(
  timeMs: number,
  requestId: string,
  method: string,
  path: string,
  status: number,
  durationMs: number,
): string {
  return `{"time":"${new Date(timeMs).toISOString()}","level":"info","msg":"request","request_id":${
    JSON.stringify(requestId)
  },"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"duration_ms":${
    hundredthsText(durationHundredths(durationMs))
  }}`;
}

/**
 * A duration in hundredths of a millisecond, rounded. Anything not a sane duration (negative, NaN, beyond
 * ~30 years) counts as 0: a monotonic clock never gives one, and the line must stay valid JSON.
 */
export function durationHundredths(ms: number): number {
  return ms > 0 && ms < 1e12 ? Math.round(ms * 100) : 0;
}

/** Hundredths as a JSON number with at most two decimals, from integer arithmetic only. */
function hundredthsText(h: number): string {
  const whole = Math.floor(h / 100);
  const frac = h - whole * 100;
  return frac === 0
    ? String(whole)
    : frac % 10 === 0
    ? `${whole}.${frac / 10}`
    : `${whole}.${frac < 10 ? "0" : ""}${frac}`;
}
