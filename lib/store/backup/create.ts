// `backup create`: a consistent snapshot of a running server's data directory (or a cluster's database and
// bucket) at one log index, written as an archive (archive.ts): the retained log, the documents as of its last
// index, the usage counters, every blob a document references (those an earlier backup holds are only named,
// with --incremental-from), the root key when asked. Nothing in the source is written or locked.

import type { StoredDoc } from "../doc_types.ts";
import type { S3Settings } from "../s3/settings.ts";
import { blobName } from "../blobs.ts";
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
  let snapshot: SourceSnapshot;
  if (source.databaseUrl) {
    const { connect } = await import("../postgres/schema.ts");
    const { readClusterSnapshot } = await import("./source_pg.ts");
    const sql = connect(source.databaseUrl, { max: 1 });
    try {
      snapshot = await readClusterSnapshot(sql, onLine);
    } finally {
      await sql.end({ timeout: 2 });
    }
  } else snapshot = await readDataDirSnapshot(source.dataDir, source.packed, onLine);
  await log.flush();
  progress(`snapshot at index ${snapshot.lastIndex}: ${log.batches} log batches`);
  let documents = 0;
  for (const [collection, docs] of [...snapshot.docs].sort(([a], [b]) => a.localeCompare(b))) {
    if (!docs.size) continue;
    const entries = new LineEntries(
      writer,
      (_, part) => `documents/${collection}/${String(part).padStart(6, "0")}.ndjson`,
    );
    for (const d of [...docs.values()].sort((a, b) => a.index - b.index || cmp(a.id, b.id))) {
      await entries.add(d.index, JSON.stringify(d));
    }
    await entries.flush();
    documents += docs.size;
  }
  progress(`documents: ${documents}`);
  for (const [name, values] of snapshot.counters) {
    await writer.add(`counters/${name}.json`, encoder.encode(JSON.stringify(values)));
  }
  const referenced = [...blobReferences(snapshot.docs)].sort();
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
  #lines: string[] = [];
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
    this.#lines.push(line + "\n");
    this.#bytes += line.length + 1;
    this.batches++;
    if (this.#lines.length >= linesPerEntry || this.#bytes >= bytesPerEntry) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.#lines.length) return;
    await this.#writer.add(this.#nameOf(this.#first, ++this.#parts), encoder.encode(this.#lines.join("")));
    this.#lines = [];
    this.#bytes = 0;
  }
}

/**
 * Every blob a document names: an object under a `blob` (a provider's hosted file) or `staged` (a direct upload
 * not yet committed) member with a `sha256` of a blob's form.
 */
export function blobReferences(docs: Map<string, Map<string, StoredDoc>>): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown, key: string, depth: number) => {
    if (depth > 64 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, key, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    if (
      (key === "blob" || key === "staged") && typeof record.sha256 === "string" &&
      blobName.test(record.sha256)
    ) {
      found.add(record.sha256);
    }
    for (const [k, v] of Object.entries(record)) walk(v, k, depth + 1);
  };
  for (const collection of docs.values()) for (const d of collection.values()) walk(d.doc, "", 0);
  return found;
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
