// How the event log's files and lines are recognised: a segment by its name (its first index), a committed line
// by its leading {"Index":N, and by parsing as a batch record; the log's recovery and a backup's reader share them.

const decoder = new TextDecoder();

/** A segment file's name: its first index, 20 digits. */
export const segmentName = /^(\d{20})\.ndjson$/;

/** A segment's file name for the segment starting at `first`. */
export function segmentFileName(first: number): string {
  return `${String(first).padStart(20, "0")}.ndjson`;
}

/** Index of a line written by the log (it always starts with {"Index":N,), or -1. */
export function lineIndex(bytes: Uint8Array, start: number, end: number): number {
  const prefix = '{"Index":';
  if (end - start < prefix.length + 1) return -1;
  for (let i = 0; i < prefix.length; i++) if (bytes[start + i] !== prefix.charCodeAt(i)) return -1;
  let n = 0;
  let i = start + prefix.length;
  let digits = 0;
  while (i < end && bytes[i]! >= 48 && bytes[i]! <= 57) {
    n = n * 10 + (bytes[i]! - 48);
    i++;
    digits++;
  }
  return digits ? n : -1;
}

/** A line's batch record, or undefined when it is not one (torn, or not JSON with an Events array). */
export function parseRecord(line: Uint8Array): { Events: unknown[]; [member: string]: unknown } | undefined {
  try {
    const v = JSON.parse(decoder.decode(line));
    return typeof v === "object" && v !== null && Array.isArray(v.Events) ? v : undefined;
  } catch {
    return undefined;
  }
}
