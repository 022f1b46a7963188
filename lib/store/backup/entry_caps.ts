// What an archive entry read whole may hold (docs/operations.md "Entry size caps"): `backup create` cuts documents
// and log lines into entries of at most 10,000 lines or 8 MiB, so verify and restore refuse a bigger entry from its
// header, before reading it; blobs are always streamed and have no cap.

/** `create` closes an entry at this many lines (documents, log batches)... */
export const linesPerEntry = 10_000;
/** ...or once its lines reach this many bytes, so an entry is at most this plus its last line. */
export const bytesPerEntry = 8 << 20;
/**
 * The default cap on an entry read whole (documents, log, counters): 8× what `create` cuts at, so an entry is
 * refused only when its last document or log batch alone would be over 56 MiB. `--max-entry-bytes` raises it.
 */
export const defaultMaxEntryBytes = 64 << 20;
/** The manifest lists every entry: it may grow by this much per entry before it, on top of the cap. */
export const manifestBytesPerEntry = 512;
/** root.key holds a base64 key of 32 bytes (44 characters). */
export const rootKeyMaxBytes = 4096;

/** The most bytes entry `name` may hold, the `entriesBefore` entries before it; undefined: no cap (a blob). */
export function entryCap(name: string, entriesBefore: number, maxEntryBytes: number): number | undefined {
  // The entry kinds of archive.ts (which imports this module): blobs/<sha256>, root.key, manifest.json.
  if (name.startsWith("blobs/")) return undefined;
  if (name === "root.key") return rootKeyMaxBytes;
  if (name === "manifest.json") return maxEntryBytes + manifestBytesPerEntry * entriesBefore;
  return maxEntryBytes;
}

/** Entries whose lines `create` counts into at most `linesPerEntry`. */
export function isLineEntry(name: string): boolean {
  return name.startsWith("documents/") || name.startsWith("log/");
}

/** The problem an entry over its cap is: it names the entry, its size and the cap. */
export function oversizedEntry(name: string, size: number, cap: number): string {
  const raise = name === "root.key" ? "" : ": if the archive is yours, raise the cap with --max-entry-bytes";
  return `${name} is ${size} bytes, over the ${
    formatCap(cap)
  } an entry read whole may hold (${cap} bytes); ` +
    `it was not read${raise}`;
}

/** The problem an entry with too many lines is. */
export function tooManyLines(name: string): string {
  return `${name} holds more than ${linesPerEntry} lines (a backup writes at most ${linesPerEntry} per entry)`;
}

/** Counts newline bytes in `chunk`. */
export function countLines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  return n;
}

function formatCap(bytes: number): string {
  return bytes % (1 << 20) === 0 ? `${bytes >> 20} MiB` : `${bytes} bytes`;
}
