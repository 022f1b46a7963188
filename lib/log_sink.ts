// The stderr sink: log lines are buffered and written by one syscall shortly after; access lines are kept as
// numbers and string references and written as bytes only then, so a request pays for no formatting.

import { durationHundredths, formatAccessLine } from "./access_line.ts";
import { requestIdOf } from "./request_id.ts";

// Lines wait at most 20 ms, or until 512 wait. An access line's time is the wall clock at the write minus the
// monotonic time since its request ended: exact to the millisecond, except that a clock step in those few
// milliseconds shows in the lines just before it too. Its text is what formatAccessLine gives (tested).

const maxPendingLines = 512;
/** Text lines, and access lines as the index of their slot; in the order they were logged. */
let pending: (string | number)[] = [];
let flushTimer: ReturnType<typeof setTimeout> | undefined;
let usedSlots = 0;
const slotSequence = new Float64Array(maxPendingLines);
const slotStarted = new Float64Array(maxPendingLines);
const slotEnded = new Float64Array(maxPendingLines);
const slotStatus = new Uint16Array(maxPendingLines);
const slotMethod: string[] = new Array(maxPendingLines).fill("");
const slotPath: string[] = new Array(maxPendingLines).fill("");

/** Queues one line of text (without its newline). */
export function writeLogLine(line: string): void {
  queue(line);
}

/** Queues one access line (the arguments of Logger.access). */
export function recordAccess(
  sequence: number,
  method: string,
  path: string,
  status: number,
  startedMs: number,
  endedMs: number,
): void {
  const slot = usedSlots++;
  slotSequence[slot] = sequence;
  slotMethod[slot] = method;
  slotPath[slot] = path;
  slotStatus[slot] = status;
  slotStarted[slot] = startedMs;
  slotEnded[slot] = endedMs;
  queue(slot);
}

function queue(entry: string | number): void {
  if (pending.push(entry) >= maxPendingLines) flushLogs();
  else flushTimer ??= setTimeout(flushLogs, 20);
}

/** Writes buffered log lines now (also called at shutdown). */
export function flushLogs(): void {
  if (flushTimer !== undefined) clearTimeout(flushTimer);
  flushTimer = undefined;
  if (pending.length === 0) return;
  const wallMinusMonotonic = usedSlots > 0 ? Date.now() - performance.now() : 0;
  let at = 0;
  for (const entry of pending) {
    if (typeof entry === "number") at = putAccess(entry, wallMinusMonotonic, at);
    else at = putText(entry + "\n", at);
  }
  pending = [];
  usedSlots = 0;
  try {
    let offset = 0;
    while (offset < at) offset += Deno.stderr.writeSync(out.subarray(offset, at));
  } catch {
    // A closed stderr must never take the server down.
  }
  if (out.length > maxKeptBufferBytes) out = new Uint8Array(initialBufferBytes);
}

// The byte writer. Constant parts are copied from pre-encoded fragments by plain loops (measured: cheaper for
// these short runs than TypedArray.set, and both cheaper than building a string and encoding it).

const encoder = new TextEncoder();
const initialBufferBytes = 1 << 16;
const maxKeptBufferBytes = 1 << 20;
let out = new Uint8Array(initialBufferBytes);
const beforeTime = encoder.encode('{"time":"');
/** Up to the request id's digits: its prefix is fixed for the process. */
const beforeSequence = encoder.encode(
  `","level":"info","msg":"request","request_id":"${requestIdOf(0).slice(0, -1)}`,
);
const beforeMethod = encoder.encode('","method":"');
const beforePath = encoder.encode('","path":"');
const beforeStatus = encoder.encode('","status":');
const beforeDuration = encoder.encode(',"duration_ms":');
const lineEnd = encoder.encode("}\n");
let timeBytesMs = Number.NaN;
let timeBytes = new Uint8Array(0);

function putAccess(slot: number, wallMinusMonotonic: number, at: number): number {
  const timeMs = Math.trunc(slotEnded[slot]! + wallMinusMonotonic);
  const method = slotMethod[slot]!;
  const path = slotPath[slot]!;
  const start = at;
  reserve(at, 200 + method.length + path.length);
  if (timeMs !== timeBytesMs) {
    timeBytesMs = timeMs;
    timeBytes = encoder.encode(new Date(timeMs).toISOString());
  }
  at = putBytes(timeBytes, putBytes(beforeTime, at));
  at = putInteger(slotSequence[slot]!, putBytes(beforeSequence, at));
  at = putPlain(method, putBytes(beforeMethod, at));
  if (at >= 0) at = putPlain(path, putBytes(beforePath, at));
  if (at < 0) {
    // A value that JSON must escape: the line is formatted as text instead, from its start.
    const line = formatAccessLine(
      timeMs,
      requestIdOf(slotSequence[slot]!),
      method,
      path,
      slotStatus[slot]!,
      slotEnded[slot]! - slotStarted[slot]!,
    );
    return putText(line + "\n", start);
  }
  at = putInteger(slotStatus[slot]!, putBytes(beforeStatus, at));
  at = putHundredths(durationHundredths(slotEnded[slot]! - slotStarted[slot]!), putBytes(beforeDuration, at));
  return putBytes(lineEnd, at);
}

function reserve(at: number, more: number): void {
  if (at + more <= out.length) return;
  const bigger = new Uint8Array(Math.max(out.length * 2, at + more));
  bigger.set(out.subarray(0, at));
  out = bigger;
}

function putText(text: string, at: number): number {
  reserve(at, text.length * 3); // UTF-8 takes at most 3 bytes per UTF-16 unit
  return at + encoder.encodeInto(text, out.subarray(at)).written;
}

function putBytes(bytes: Uint8Array, at: number): number {
  for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i]!;
  return at + bytes.length;
}

/** Copies printable ASCII that JSON carries unescaped; -1 at the first character that is not. */
function putPlain(text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    out[at++] = c;
  }
  return at;
}

/** A non-negative integer in decimal (int32 arithmetic while it fits: much cheaper than Math.floor). */
function putInteger(n: number, at: number): number {
  let digits = 1;
  if (n < 0x7fffffff) {
    for (let x = n | 0; x >= 10; x = (x / 10) | 0) digits++;
    let v = n | 0;
    for (let p = at + digits - 1; p >= at; p--) {
      const q = (v / 10) | 0;
      out[p] = 48 + v - q * 10;
      v = q;
    }
  } else {
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    let v = n;
    for (let p = at + digits - 1; p >= at; p--) {
      const q = Math.floor(v / 10);
      out[p] = 48 + v - q * 10;
      v = q;
    }
  }
  return at + digits;
}

/** Hundredths of a millisecond as the same JSON number formatAccessLine writes. */
function putHundredths(h: number, at: number): number {
  const whole = Math.floor(h / 100);
  const frac = h - whole * 100;
  at = putInteger(whole, at);
  if (frac === 0) return at;
  out[at++] = 0x2e; // "."
  out[at++] = 48 + Math.floor(frac / 10);
  if (frac % 10 !== 0) out[at++] = 48 + (frac % 10);
  return at;
}
