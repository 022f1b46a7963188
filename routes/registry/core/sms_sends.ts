// The limits on SMS code requests (docs/security.md#throttles), worked out from the send times kept in
// the user's stored SMS document, so that every node of a cluster counts the same sends.

import type { SmsCodeDoc, SmsCodeInFlight } from "./model.ts";

const HOUR = 60 * 60_000;
/** Codes sent to one user within an hour. */
export const SMS_SENDS_PER_HOUR = 5;

/** The document's send times still counted at `now` (the last hour's), oldest first. */
export function recentSends(doc: SmsCodeDoc | undefined, now: number): number[] {
  const sent = Array.isArray(doc?.sent_at) ? doc.sent_at : [];
  // A time ahead of this node's clock (another node's clock runs ahead) counts as now: it never blocks longer.
  return sent.filter((t) => typeof t === "number" && Number.isFinite(t)).map((t) => Math.min(t, now))
    .filter((t) => now - t < HOUR).sort((a, b) => a - b);
}

/**
 * Milliseconds until another code may be sent after `sends` (oldest first): one per `intervalMs` and
 * SMS_SENDS_PER_HOUR in a sliding hour. 0 when one may be sent now.
 */
export function sendWaitMs(sends: readonly number[], now: number, intervalMs: number): number {
  const last = sends.at(-1);
  let wait = last === undefined ? 0 : last + intervalMs - now;
  if (sends.length >= SMS_SENDS_PER_HOUR) {
    wait = Math.max(wait, sends[sends.length - SMS_SENDS_PER_HOUR]! + HOUR - now);
  }
  return Math.max(0, wait);
}

/** Whether the document holds a code (one may be used up, voided or unsent: its send times stay). */
export function hasCode(doc: SmsCodeDoc | undefined): doc is SmsCodeInFlight {
  return typeof doc?.sealed === "string" && doc.sealed !== "" && typeof doc.expires_at === "number" &&
    doc.expires_at > 0 && typeof doc.failures === "number";
}

/**
 * The document once its code is gone: the send times still counted, or null (deleted) when none is. It keeps a
 * code's fields, empty and expired (`expires_at` 0), so that a node of the previous release, which reads every SMS
 * document as a code, sees an expired one during a rolling upgrade (docs/scale-out.md) instead of failing.
 */
export function withoutCode(doc: SmsCodeDoc | undefined, now: number): SmsCodeDoc | null {
  const sends = recentSends(doc, now);
  return sends.length ? { sealed: "", expires_at: 0, failures: 0, sent_at: sends } : null;
}
