// The backup archive: one file of named entries, each with its size and sha256, a manifest last and an end
// marker (docs/operations.md "The archive"). Written to FILE.partial and renamed once complete and fsynced, so a
// file by the final name always ends with its marker; read by offset, so verify and restore never hold a blob,
// and an entry read whole is refused from its header when it is over its cap (entry_caps.ts).
//
//   WHARF-BACKUP 1\n
//   {"entry":NAME,"size":N,"sha256":HEX}\n  <N bytes>  \n      (repeated; manifest.json is the last entry)
//   WHARF-BACKUP-END\n

import { createHash } from "node:crypto";
import { writeAll } from "../file/fsutil.ts";
import {
  bytesForValues,
  defaultMaxEntryBytes,
  entryCap,
  isLineEntry,
  linesPerEntry,
  manifestBytesPerEntry,
  oversizedEntry,
  tooManyLines,
  tooManyValues,
  valueCap,
} from "./entry_caps.ts";
import { documentLinesProblems } from "./document_lines.ts";
import { openFreshFile } from "./fresh_file.ts";
import { countJsonValues, JsonValueCounter } from "./json_values.ts";
import { type BackupManifest, manifestShapeProblem } from "./manifest_shape.ts";

export const archiveMagic = "WHARF-BACKUP 1\n";
export const archiveEnd = "WHARF-BACKUP-END\n";
export const manifestEntry = "manifest.json";
/** Blob entries are `blobs/<sha256 of their bytes>`. */
export const blobEntryPrefix = "blobs/";
/** Entry names an archive may hold: never a path outside the entry's own kind (restore writes by kind). */
export const entryName =
  /^(documents\/(registry|auth|cluster|test)\/[a-z][a-z0-9_-]{0,63}\/\d{6}\.ndjson|log\/\d{20}\.ndjson|blobs\/[0-9a-f]{64}|counters\/[A-Za-z0-9_-]{1,64}\.json|root\.key|manifest\.json)$/;
const maxHeaderBytes = 4096;
const chunkBytes = 1 << 20;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface EntryRecord {
  name: string;
  size: number;
  sha256: string;
}

/** What both `backup create` and `backup restore` report of a snapshot. */
export interface SnapshotCounts {
  /** The snapshot's index. */
  index: number;
  /** The oldest log index the archive holds (index + 1 when it holds none). */
  firstIndex: number;
  /** Log batches. */
  batches: number;
  documents: number;
  /** Blobs: create: copied into the archive (not those left in its base); restore: those the target now holds. */
  blobs: number;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Appends entries to `<path>.partial`; `finish` writes the manifest and end marker, fsyncs and renames. */
export class ArchiveWriter {
  readonly path: string;
  readonly partialPath: string;
  readonly entries: EntryRecord[] = [];
  bytes = 0;
  /**
   * The `--max-entry-bytes` the JSON values of the entries read whole (documents and log per line, counters and
   * the manifest whole) need (entry_caps.ts valueCap); their sizes need what `entries` says.
   */
  maxEntryBytesForValues = 0;
  #file: Deno.FsFile;

  private constructor(path: string, file: Deno.FsFile) {
    this.path = path;
    this.partialPath = `${path}.partial`;
    this.#file = file;
  }

  static async create(path: string): Promise<ArchiveWriter> {
    const file = await openFreshFile(`${path}.partial`);
    const writer = new ArchiveWriter(path, file);
    await writer.#write(encoder.encode(archiveMagic));
    return writer;
  }

  async #write(bytes: Uint8Array): Promise<void> {
    await writeAll(this.#file, bytes);
    this.bytes += bytes.length;
  }

  async add(name: string, payload: Uint8Array): Promise<void> {
    this.#countValues(name, payload);
    const record = { name, size: payload.length, sha256: sha256Hex(payload) };
    await this.#write(header(record));
    await this.#write(payload);
    await this.#write(encoder.encode("\n"));
    this.entries.push(record);
  }

  #countValues(name: string, payload: Uint8Array): void {
    if (name.startsWith(blobEntryPrefix) || name === "root.key") return;
    const most = countJsonValues(payload, isLineEntry(name)).most;
    // The manifest's cap grows with the entries before it (entry_caps.ts entryCap).
    const allowance = name === manifestEntry ? manifestBytesPerEntry * this.entries.length : 0;
    this.maxEntryBytesForValues = Math.max(this.maxEntryBytesForValues, bytesForValues(most) - allowance);
  }

  /**
   * Streams `size` bytes whose sha256 must be `sha256` (a blob's name): the header is written first, and a body
   * that differs in size or digest fails the backup naming the entry.
   */
  async addStream(
    name: string,
    size: number,
    sha256: string,
    body: ReadableStream<Uint8Array>,
  ): Promise<void> {
    const record = { name, size, sha256 };
    await this.#write(header(record));
    const hash = createHash("sha256");
    let seen = 0;
    for await (const chunk of body) {
      seen += chunk.length;
      if (seen > size) throw new Error(`${name} is longer than its ${size} bytes`);
      hash.update(chunk);
      await this.#write(chunk);
    }
    if (seen !== size) throw new Error(`${name} ended after ${seen} of its ${size} bytes`);
    const actual = hash.digest("hex");
    if (actual !== sha256) {
      throw new Error(`${name} reads as sha256 ${actual} in the source: the source is damaged`);
    }
    await this.#write(encoder.encode("\n"));
    this.entries.push(record);
  }

  /**
   * Writes the manifest (given the entry list) and the end marker, fsyncs and renames to the final name; returns
   * the manifest's entry.
   */
  async finish(manifest: Record<string, unknown>): Promise<EntryRecord> {
    const body = encoder.encode(JSON.stringify({ ...manifest, entries: this.entries }, null, 1));
    this.#countValues(manifestEntry, body);
    const record = { name: manifestEntry, size: body.length, sha256: sha256Hex(body) };
    await this.#write(header(record));
    await this.#write(body);
    await this.#write(encoder.encode("\n" + archiveEnd));
    await this.#file.sync();
    this.#file.close();
    await Deno.rename(this.partialPath, this.path);
    const slash = this.path.lastIndexOf("/");
    const dir = slash > 0 ? this.path.slice(0, slash) : slash === 0 ? "/" : ".";
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
    return record;
  }

  /** Closes and removes the partial file (a failed attempt). */
  async abandon(): Promise<void> {
    try {
      this.#file.close();
    } catch {
      // already closed
    }
    await Deno.remove(this.partialPath).catch(() => {});
  }
}

function header(record: EntryRecord): Uint8Array {
  return encoder.encode(
    JSON.stringify({ entry: record.name, size: record.size, sha256: record.sha256 }) + "\n",
  );
}

/** An entry found in an archive: its header and where its payload lies. */
export interface ArchiveEntry extends EntryRecord {
  offset: number;
}

/** What reading an archive found: its entries in order, its manifest, and every problem, each naming its entry. */
export interface ArchiveScan {
  entries: ArchiveEntry[];
  /** The manifest, once read and of the manifest's shape. */
  manifest: BackupManifest | undefined;
  problems: string[];
}

/** Random access to an archive file: headers, payload bytes and payload streams by offset. */
export class ArchiveReader {
  readonly path: string;
  readonly size: number;
  #file: Deno.FsFile;

  private constructor(path: string, file: Deno.FsFile, size: number) {
    this.path = path;
    this.#file = file;
    this.size = size;
  }

  static async open(path: string): Promise<ArchiveReader> {
    const file = await Deno.open(path, { read: true });
    return new ArchiveReader(path, file, (await file.stat()).size);
  }

  close(): void {
    this.#file.close();
  }

  async #readAt(offset: number, length: number): Promise<Uint8Array> {
    const out = new Uint8Array(Math.max(0, Math.min(length, this.size - offset)));
    await this.#file.seek(offset, Deno.SeekMode.Start);
    let filled = 0;
    while (filled < out.length) {
      const n = await this.#file.read(out.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    return out.subarray(0, filled);
  }

  async bytes(entry: ArchiveEntry): Promise<Uint8Array> {
    return await this.#readAt(entry.offset, entry.size);
  }

  /** The payload in chunks (not hashed: verify first). */
  async *chunks(entry: ArchiveEntry): AsyncGenerator<Uint8Array> {
    for (let done = 0; done < entry.size;) {
      const chunk = await this.#readAt(entry.offset + done, Math.min(chunkBytes, entry.size - done));
      if (chunk.length === 0) throw new Error(`${entry.name} is truncated`);
      done += chunk.length;
      yield chunk;
    }
  }

  /**
   * Walks every entry. With `hash`, each payload's sha256 is checked against its header, and a documents or log
   * entry's lines are counted; the manifest is then checked against the entries found, and the end marker against
   * the file's end. An entry over its cap (`maxEntryBytes`, entry_caps.ts) is a problem found from its header: it
   * is never read.
   */
  async scan(
    options: { hash: boolean; maxEntryBytes?: number; progress?: (entry: EntryRecord) => void },
  ): Promise<ArchiveScan> {
    const maxEntryBytes = options.maxEntryBytes ?? defaultMaxEntryBytes;
    const scan: ArchiveScan = { entries: [], manifest: undefined, problems: [] };
    const magic = decoder.decode(await this.#readAt(0, archiveMagic.length));
    if (magic !== archiveMagic) {
      scan.problems.push(
        `not a wharf backup (it does not start with ${JSON.stringify(archiveMagic.trim())})`,
      );
      return scan;
    }
    let offset = archiveMagic.length;
    let previous = "the archive's start";
    for (;;) {
      if (scan.manifest !== undefined || scan.entries.at(-1)?.name === manifestEntry) break;
      if (offset >= this.size) {
        scan.problems.push(`the archive ends after ${previous} without its manifest: it is truncated`);
        return scan;
      }
      const head = await this.#readAt(offset, maxHeaderBytes);
      const nl = head.indexOf(10);
      let parsed: { entry?: unknown; size?: unknown; sha256?: unknown } | undefined;
      try {
        parsed = nl > 0 ? JSON.parse(decoder.decode(head.subarray(0, nl))) : undefined;
      } catch {
        parsed = undefined;
      }
      const name = typeof parsed?.entry === "string" ? parsed.entry : undefined;
      if (
        !parsed || !name || !entryName.test(name) || !Number.isSafeInteger(parsed.size) ||
        (parsed.size as number) < 0 || typeof parsed.sha256 !== "string" ||
        !/^[0-9a-f]{64}$/.test(parsed.sha256)
      ) {
        scan.problems.push(
          `the entry header at byte ${offset} (after ${previous}) is damaged${
            name ? ` (it names ${JSON.stringify(name.slice(0, 200))})` : ""
          }: the entries after it cannot be read`,
        );
        return scan;
      }
      const entry: ArchiveEntry = {
        name,
        size: parsed.size as number,
        sha256: parsed.sha256,
        offset: offset + nl + 1,
      };
      if (entry.offset + entry.size + 1 > this.size) {
        scan.problems.push(`${name} is truncated (${entry.size} bytes announced, the archive ends before)`);
        return scan;
      }
      const separator = await this.#readAt(entry.offset + entry.size, 1);
      if (separator[0] !== 10) {
        scan.problems.push(
          `${name}: its size or the bytes after it are damaged (no entry boundary after it)`,
        );
        return scan;
      }
      const cap = entryCap(name, scan.entries.length, maxEntryBytes);
      if (cap !== undefined && entry.size > cap) {
        scan.problems.push(oversizedEntry(name, entry.size, cap));
        // The manifest is last, and the entries cannot be checked against one that is not read.
        if (name === manifestEntry) return scan;
      } else if (options.hash || name === manifestEntry) {
        const hash = createHash("sha256");
        // What parsing it would build, counted where restore parses it: a documents or log line, a counters set
        // or the manifest whole (root.key is not JSON, and its cap is small).
        const lineEntry = isLineEntry(name);
        const values = cap !== undefined && name !== "root.key" ? new JsonValueCounter(lineEntry) : undefined;
        for await (const chunk of this.chunks(entry)) {
          hash.update(chunk);
          values?.add(chunk);
        }
        const actual = hash.digest("hex");
        let parsable = true;
        if (values) {
          values.finish();
          if (lineEntry && values.lines > linesPerEntry) {
            scan.problems.push(tooManyLines(name));
            parsable = false;
          }
          const mostValues = valueCap(cap!);
          if (values.most > mostValues) {
            parsable = false;
            const line = lineEntry ? values.mostAtLine : undefined;
            scan.problems.push(tooManyValues(name, line, values.most, mostValues));
          }
        }
        if (actual !== entry.sha256) {
          scan.problems.push(`${name} is corrupt: its sha256 is ${actual}, its header says ${entry.sha256}`);
        } else if (name === manifestEntry && parsable) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(decoder.decode(await this.bytes(entry)));
          } catch {
            scan.problems.push(`${manifestEntry} is not valid JSON`);
          }
          const problem = parsed === undefined ? undefined : manifestShapeProblem(parsed);
          if (problem) scan.problems.push(`${manifestEntry} is damaged: ${problem}`);
          else if (parsed !== undefined) scan.manifest = parsed as BackupManifest;
        } else if (parsable && name.startsWith("documents/")) {
          // Restore writes each line as a stored document: one that is not would stop the server it restores.
          scan.problems.push(...await documentLinesProblems(name, this.chunks(entry)));
        }
      }
      // A blob is named by its sha256: a header that agrees with other bytes is a rewritten entry, not the blob.
      if (name.startsWith(blobEntryPrefix) && entry.sha256 !== name.slice(blobEntryPrefix.length)) {
        scan.problems.push(`${name} holds other bytes (their sha256 is ${entry.sha256})`);
      }
      options.progress?.(entry);
      scan.entries.push(entry);
      previous = name;
      offset = entry.offset + entry.size + 1;
    }
    const end = decoder.decode(await this.#readAt(offset, archiveEnd.length + 1));
    if (end !== archiveEnd) {
      scan.problems.push(
        end.startsWith(archiveEnd.slice(0, end.length)) && end.length < archiveEnd.length
          ? "the end marker is missing: the archive is truncated"
          : "the end marker is damaged, or bytes follow it",
      );
    }
    if (scan.manifest) checkManifest(scan);
    return scan;
  }
}

/** Every entry must be listed in the manifest with its size and sha256, and every listed entry present. */
function checkManifest(scan: ArchiveScan): void {
  const listed = new Map<string, EntryRecord>();
  for (const e of scan.manifest!.entries) listed.set(e.name, e);
  for (const entry of scan.entries) {
    if (entry.name === manifestEntry) continue;
    const l = listed.get(entry.name);
    if (!l) scan.problems.push(`${entry.name} is not listed in ${manifestEntry}`);
    else if (l.size !== entry.size || l.sha256 !== entry.sha256) {
      scan.problems.push(`${entry.name}: its header differs from ${manifestEntry} (size or sha256)`);
    }
    listed.delete(entry.name);
  }
  for (const name of listed.keys()) scan.problems.push(`${name} is listed in ${manifestEntry} but missing`);
}
