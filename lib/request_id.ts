// Request ids: a per-process random prefix and a decimal sequence number.

import { randomBase62 } from "./ids.ts";

/**
 * Unique without a CSPRNG call per request (decimal: V8 turns a small integer into its string far more cheaply
 * than toString(36) + padStart). Only printable ASCII, so the access log writes it without escaping.
 */
const requestIdPrefix = randomBase62(6);
let lastSequence = 0;

/** The next request's sequence number; its id is `requestIdOf(sequence)`. */
export function nextRequestSequence(): number {
  return ++lastSequence;
}

export function requestIdOf(sequence: number): string {
  return requestIdPrefix + sequence;
}
