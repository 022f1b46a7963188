// `backup create`: a consistent snapshot of a running server's data directory (or a cluster's database and
// bucket) at one log index, written as an archive (archive.ts): the retained log, the documents as of its last
// index, the usage counters, every blob a document references (those an earlier backup holds are only named,
// with --incremental-from), the root key when asked. Nothing in the source is written or locked. The documents are
// streamed (a data directory's checkpoint through a temporary spool file, a database's through a cursor), so its
// memory does not grow with them (docs/operations.md "Scheduling and retention").

import type { StoredDoc } from "../doc_types.ts";
import { concatBytes } from "../../bytes.ts";
import type { S3Settings } from "../s3/settings.ts";
import {
  ArchiveReader,
  ArchiveWriter,
  blobEntryPrefix,
  type EntryRecord,
  manifestEntry,
  type SnapshotCounts,
} from "./archive.ts";
import { type BlobEndpoint, bucketBlobs, folderBlobs } from "../blob_endpoints.ts";
import { type LogLine, RetrySnapshot, type SourceSnapshot } from "./source.ts";
import { readDataDirSnapshot } from "./source_file.ts";
import { DocSpool } from "./doc_spool.ts";
import { blobsNamedBy } from "./blob_refs.ts";
import { segmentFileName } from "../file/log_lines.ts";
import { bytesPerEntry, defaultMaxEntryBytes, linesPerEntry, manifestBytesPerEntry } from "./entry_caps.ts";

export interface BackupSource {
  /** The data directory (the source itself, or with a database only its blobs when no bucket is set). */
  dataDir: string;
  /** A cluster: the database the nodes use (WHARF_DATABASE_URL). */
  databaseUrl?: string;
  /** Blobs in a bucket (WHARF_BLOB_STORE). */
  s3?: S3Settings;
  /** Collections checkpointed as packs (app.ts). */
  packed: readonly string[];
  /** WHARF_ROOT_KEY, when the nodes run with it. */
  rootKey?: string;
}

export interface CreateOptions {
  source: BackupSource;
  output: string;
  incrementalFrom?: string;
  /** The cap on the base's manifest, read whole (entry_caps.ts; its default unless given). */
  maxEntryBytes?: number;
  includeRootKey: boolean;
  progress(stage: string): void;
}

export interface CreateSummary extends SnapshotCounts {
  blobBytes: number;
  blobsInBase: number;
  /** Referenced by a document but absent from the store on every attempt. */
  missingBlobs: string[];
  /**
   * The `--max-entry-bytes` verify and restore need for this archive, when its largest entry read whole (a document
   * or log batch over 56 MiB, a huge counters set or manifest) is over the default cap (entry_caps.ts).
   */
  needsMaxEntryBytes?: number;
  bytes: number;
  rootKey: boolean;
  incremental: boolean;
}

const attempts = 3;
const encoder = new TextEncoder();

export async function createBackup(options: CreateOptions): Promise<CreateSummary> {
  const base = options.incrementalFrom
    ? await readBase(options.incrementalFrom, options.maxEntryBytes)
    : undefined;
  const rootKey = options.includeRootKey ? await readRootKey(options.source) : undefined;
  const blobs = options.source.s3
    ? await bucketBlobs(options.source.s3)
    : folderBlobs(options.source.dataDir);
  try {
    for (let attempt = 1;; attempt++) {
      const writer = await ArchiveWriter.create(options.output);
      try {
        const summary = await attemptBackup(options, writer, blobs, base, rootKey);
        if (summary.missingBlobs.length && attempt < attempts) {
          // A blob the snapshot references was removed before it was copied (its box deleted since): the next
          // snapshot no longer references it.
          options.progress(
            `${summary.missingBlobs.length} referenced blobs vanished: taking the snapshot again`,
          );
          await writer.abandon();
          continue;
        }
        return summary;
      } catch (err) {
        await writer.abandon();
        if (err instanceof RetrySnapshot && attempt < attempts) {
          options.progress(`${err.message}: taking the snapshot again`);
          continue;
        }
        throw err;
      }
    }
  } finally {
    blobs.close();
  }
}

interface Base {
  path: string;
  manifestSha256: string;
  snapshotIndex: number;
  blobs: Set<string>;
}

async function attemptBackup(
  options: CreateOptions,
  writer: ArchiveWriter,
  blobs: BlobEndpoint,
  base: Base | undefined,
  rootKey: string | undefined,
): Promise<CreateSummary> {
  const { source, progress } = options;
  const log = new LineEntries(writer, (first) => `log/${segmentFileName(first)}`);
  const onLine = async ({ index, line }: LogLine) => {
    await log.add(index, line);
    if (log.batches % 10_000 === 0) progress(`log: ${log.batches} batches`);
  };
  // The documents and counters are written while the snapshot is open (the database's transaction, the spool).
  const writeSnapshot = async (snapshot: SourceSnapshot) => {
    await log.flush();
    progress(`snapshot at index ${snapshot.lastIndex}: ${log.batches} log batches`);
    const written = await writeDocuments(writer, snapshot);
    progress(`documents: ${written.documents}`);
    for (const [name, values] of snapshot.counters) {
      await writer.add(`counters/${name}.json`, encoder.encode(JSON.stringify(values)));
    }
    return { snapshot, ...written };
  };
  let read: Awaited<ReturnType<typeof writeSnapshot>>;
  if (source.databaseUrl) {
    const { connect } = await import("../postgres/schema.ts");
    const { readClusterSnapshot } = await import("./source_pg.ts");
    const sql = connect(source.databaseUrl, { max: 1 });
    try {
      read = await readClusterSnapshot(sql, onLine, writeSnapshot);
    } finally {
      await sql.end({ timeout: 2 });
    }
  } else {
    const spool = await DocSpool.create(options.output);
    try {
      read = await writeSnapshot(await readDataDirSnapshot(source.dataDir, source.packed, spool, onLine));
    } finally {
      spool.close();
    }
  }
  const { snapshot, documents } = read;
  const referenced = [...read.blobs].sort();
  const missingBlobs: string[] = [];
  const inBase: string[] = [];
  let copied = 0;
  let blobBytes = 0;
  for (const sha256 of referenced) {
    if (base?.blobs.has(sha256)) {
      inBase.push(sha256);
      continue;
    }
    const blob = await blobs.read(sha256);
    if (!blob) {
      missingBlobs.push(sha256);
      continue;
    }
    await writer.addStream(`blobs/${sha256}`, blob.size, sha256, blob.body);
    copied++;
    blobBytes += blob.size;
    progress(
      `blobs: ${copied + inBase.length} of ${referenced.length} (${formatBytes(writer.bytes)} written)`,
    );
  }
  if (rootKey !== undefined) await writer.add("root.key", encoder.encode(rootKey));
  const summary: CreateSummary = {
    index: snapshot.lastIndex,
    firstIndex: snapshot.firstIndex,
    batches: log.batches,
    documents,
    blobs: copied,
    blobBytes,
    blobsInBase: inBase.length,
    missingBlobs,
    bytes: 0,
    rootKey: rootKey !== undefined,
    incremental: base !== undefined,
  };
  const manifestRecord = await writer.finish({
    format: "wharf-backup",
    version: 1,
    created_at: new Date().toISOString(),
    source: source.databaseUrl ? "cluster" : "data-dir",
    snapshot_index: snapshot.lastIndex,
    first_index: snapshot.firstIndex,
    source_checkpoint_index: snapshot.checkpointIndex,
    batches: log.batches,
    documents,
    blobs: referenced.length,
    root_key: rootKey !== undefined,
    missing_blobs: missingBlobs,
    base: base
      ? {
        file: base.path.slice(base.path.lastIndexOf("/") + 1),
        manifest_sha256: base.manifestSha256,
        snapshot_index: base.snapshotIndex,
        blobs: inBase,
      }
      : null,
  });
  summary.bytes = (await Deno.stat(options.output)).size;
  // An entry's size, or a line holding more JSON values than the default cap allows (entry_caps.ts valueCap).
  const needed = Math.max(
    neededMaxEntryBytes([...writer.entries, manifestRecord]),
    writer.maxEntryBytesForValues,
  );
  if (needed > defaultMaxEntryBytes) summary.needsMaxEntryBytes = needed;
  return summary;
}

/** The smallest `--max-entry-bytes` under which no entry of `entries` (in archive order) is over its cap. */
function neededMaxEntryBytes(entries: EntryRecord[]): number {
  let needed = 0;
  entries.forEach(({ name, size }, before) => {
    if (name.startsWith(blobEntryPrefix) || name === "root.key") return;
    needed = Math.max(needed, name === manifestEntry ? size - manifestBytesPerEntry * before : size);
  });
  return needed;
}

/**
 * JSON lines (log batches, documents) gathered into entries of at most 10,000 lines or 8 MiB, so no entry is
 * one huge string; `nameOf` names each entry by its first line's index and its number.
 */
class LineEntries {
  readonly #writer: ArchiveWriter;
  readonly #nameOf: (firstIndex: number, part: number) => string;
  /** The entry's lines so far, UTF-8 encoded: its size is counted in bytes, as the caps read it. */
  #lines: Uint8Array[] = [];
  #bytes = 0;
  #first = 0;
  #parts = 0;
  /** Lines added so far (log batches). */
  batches = 0;

  constructor(writer: ArchiveWriter, nameOf: (firstIndex: number, part: number) => string) {
    this.#writer = writer;
    this.#nameOf = nameOf;
  }

  async add(index: number, line: string): Promise<void> {
    if (!this.#lines.length) this.#first = index;
    const bytes = encoder.encode(line + "\n");
    this.#lines.push(bytes);
    this.#bytes += bytes.length;
    this.batches++;
    if (this.#lines.length >= linesPerEntry || this.#bytes >= bytesPerEntry) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.#lines.length) return;
    await this.#writer.add(this.#nameOf(this.#first, ++this.#parts), concatBytes(this.#lines));
    this.#lines = [];
    this.#bytes = 0;
  }
}

/**
 * Writes every collection's documents as of the snapshot's index, each collection once (by name): the checkpointed
 * ones the log did not write since, as they are read, then those it wrote, by index and id. Returns how many, and
 * the blobs they name.
 */
async function writeDocuments(
  writer: ArchiveWriter,
  snapshot: SourceSnapshot,
): Promise<{ documents: number; blobs: Set<string> }> {
  const blobs = new Set<string>();
  let documents = 0;
  const collections = [...new Set([...snapshot.collections, ...snapshot.written.keys()])]
    .sort((a, b) => a.localeCompare(b));
  for (const collection of collections) {
    const entries = new LineEntries(
      writer,
      (_, part) => `documents/${collection}/${String(part).padStart(6, "0")}.ndjson`,
    );
    const written = snapshot.written.get(collection) ?? new Map<string, StoredDoc | null>();
    if (snapshot.collections.includes(collection)) {
      for await (const d of snapshot.checkpointed(collection)) {
        if (written.has(d.id)) continue;
        for (const sha256 of d.blobs) blobs.add(sha256);
        await entries.add(0, d.line);
      }
    }
    const after = [...written.values()].filter((d) => d !== null).sort((a, b) =>
      a.index - b.index || cmp(a.id, b.id)
    );
    for (const d of after) {
      for (const sha256 of blobsNamedBy(d.doc)) blobs.add(sha256);
      await entries.add(d.index, JSON.stringify(d));
    }
    await entries.flush();
    documents += entries.batches;
  }
  return { documents, blobs };
}

async function readBase(path: string, maxEntryBytes: number | undefined): Promise<Base> {
  const reader = await ArchiveReader.open(path);
  try {
    const scan = await reader.scan({
      hash: false,
      ...(maxEntryBytes !== undefined ? { maxEntryBytes } : {}),
    });
    if (scan.problems.length || !scan.manifest) {
      throw new Error(`--incremental-from ${path}: ${scan.problems[0] ?? "no manifest"}`);
    }
    const manifestAt = scan.entries.find((e) => e.name === manifestEntry)!;
    return {
      path,
      manifestSha256: manifestAt.sha256,
      snapshotIndex: Number(scan.manifest.snapshot_index),
      // Only the blobs this file holds itself: an incremental's base is one file, never a chain.
      blobs: new Set(
        scan.entries.filter((e) => e.name.startsWith(blobEntryPrefix)).map((e) =>
          e.name.slice(blobEntryPrefix.length)
        ),
      ),
    };
  } finally {
    reader.close();
  }
}

async function readRootKey(source: BackupSource): Promise<string> {
  if (source.rootKey) return source.rootKey;
  if (source.databaseUrl) throw new Error("--include-root-key: the nodes' WHARF_ROOT_KEY is not set here");
  try {
    return (await Deno.readTextFile(`${source.dataDir}/root.key`)).trim();
  } catch (err) {
    throw new Error(`--include-root-key: cannot read ${source.dataDir}/root.key: ${err}`);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
