// What an archive entry read whole may hold (docs/operations.md "Entry size caps"): `backup create` cuts documents
// and log lines into entries of at most 10,000 lines or 8 MiB, so verify and restore refuse a bigger entry from its
// header, before reading it, and a line (or counters set, or manifest) that would parse into more values than its
// cap allows once they count them; blobs are always streamed and have no cap.

/** `create` closes an entry at this many lines (documents, log batches)... */
export const linesPerEntry = 10_000;
/** ...or once its lines reach this many bytes, so an entry is at most this plus its last line. */
export const bytesPerEntry = 8 << 20;
/**
 * The default cap on an entry read whole (documents, log, counters): 8× what `create` cuts at, so an entry is
 * refused only when its last document or log batch alone would be over 56 MiB. `--max-entry-bytes` raises it.
 */
export const defaultMaxEntryBytes = 64 << 20;
/**
 * The most bytes an entry may be read whole in: V8's longest string (2^29 - 24 characters), which restore decodes
 * an entry into. `--max-entry-bytes` goes no higher.
 */
export const maxReadableEntryBytes = 2 ** 29 - 24;
/**
 * An entry may hold one JSON value (json_values.ts) per this many bytes of its cap, on one line of documents or log
 * (the parse of a line is what restore holds), or in a whole counters set or manifest: 1,048,576 at the default.
 * Parsed, the costliest value (`{}`) takes ~100 bytes, so raising `--max-entry-bytes` raises this too.
 */
export const capBytesPerValue = 64;
/** The manifest lists every entry: it may grow by this much per entry before it, on top of the cap. */
export const manifestBytesPerEntry = 512;
/** root.key holds a base64 key of 32 bytes (44 characters). */
export const rootKeyMaxBytes = 4096;

/** The most bytes entry `name` may hold, the `entriesBefore` entries before it; undefined: no cap (a blob). */
export function entryCap(name: string, entriesBefore: number, maxEntryBytes: number): number | undefined {
  // The entry kinds of archive.ts (which imports this module): blobs/<sha256>, root.key, manifest.json.
  if (name.startsWith("blobs/")) return undefined;
  if (name === "root.key") return rootKeyMaxBytes;
  if (name === "manifest.json") {
    return Math.min(maxEntryBytes + manifestBytesPerEntry * entriesBefore, maxReadableEntryBytes);
  }
  return maxEntryBytes;
}

/** The most JSON values one line (or an entry parsed whole) may hold under an entry cap of `byteCap`. */
export function valueCap(byteCap: number): number {
  return Math.floor(byteCap / capBytesPerValue);
}

/** The `--max-entry-bytes` under which a line (or entry) of `values` JSON values is within its cap. */
export function bytesForValues(values: number): number {
  return values * capBytesPerValue;
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

/** The problem a line (or an entry parsed whole) holding more JSON values than its cap is. */
export function tooManyValues(name: string, line: number | undefined, values: number, cap: number): string {
  const where = line === undefined ? name : `${name} line ${line}`;
  const needed = bytesForValues(values);
  const raise = needed <= maxReadableEntryBytes
    ? `if the archive is yours, give --max-entry-bytes ${needed}`
    : "no --max-entry-bytes restore can read allows it";
  return `${where} holds ${values} JSON values (containers and items), over the ${cap} one ${
    line === undefined ? "entry parsed whole" : "line"
  } may hold (1 per ${capBytesPerValue} bytes of the entry cap); it was not parsed: ${raise}`;
}

/** The problem an entry with too many lines is. */
export function tooManyLines(name: string): string {
  return `${name} holds more than ${linesPerEntry} lines (a backup writes at most ${linesPerEntry} per entry)`;
}

function formatCap(bytes: number): string {
  return bytes % (1 << 20) === 0 ? `${bytes >> 20} MiB` : `${bytes} bytes`;
}
