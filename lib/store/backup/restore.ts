// `backup restore`: verifies the archive (and an incremental's base) first, refuses a target that holds
// anything, then writes the snapshot as a server would have left it: a data directory (built beside the target
// and renamed into place, so a killed restore leaves no half-filled one) or a cluster's database and bucket (the
// blobs first, then the rest in one database transaction, so a failed restore leaves the database empty).

import { ConfigError } from "../../errors.ts";
import type { StoredDoc } from "../doc_types.ts";
import { DigestMismatchError } from "../errors.ts";
import type { S3Settings } from "../s3/settings.ts";
import { FileSnapshots } from "../file/snapshots.ts";
import { atomicWrite, ensureDir, syncDir } from "../file/fsutil.ts";
import { segmentFileName } from "../file/log_lines.ts";
import { type ArchiveEntry, ArchiveReader, blobEntryPrefix, type SnapshotCounts } from "./archive.ts";
import {
  type BlobEndpoint,
  BlobStoreNotEmptyError,
  bucketBlobs,
  folderBlobs,
  heldForCopy,
} from "../blob_endpoints.ts";
import { verifyBackup } from "./verify.ts";
import { defaultMaxEntryBytes, valueCap } from "./entry_caps.ts";

export interface RestoreOptions {
  input: string;
  basePath?: string;
  /** The data directory to create (or, with a database, where file blobs go). */
  dataDir?: string;
  databaseUrl?: string;
  s3?: S3Settings;
  packed: readonly string[];
  /** The cap on an entry read whole (entry_caps.ts; its default unless given). */
  maxEntryBytes?: number;
  /** With a database: where to write the archive's root key (the nodes take it as WHARF_ROOT_KEY). */
  rootKeyOut?: string;
  progress(stage: string): void;
}

export interface RestoreSummary extends SnapshotCounts {
  rootKey: "written" | "absent" | "not written";
}

/** The archive or its base is damaged or missing: nothing was written. */
export class BackupDamagedError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join("; "));
    this.name = "BackupDamagedError";
    this.problems = problems;
  }
}

/** The target already holds data: nothing was written. */
export class TargetNotEmptyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetNotEmptyError";
  }
}

interface Source {
  reader: ArchiveReader;
  entry: ArchiveEntry;
}

const decoder = new TextDecoder();
/** The lines of a batch of documents parsed at once (1 MiB: 1,048,576 JSON values at most, as one line may hold). */
const batchChars = valueCap(defaultMaxEntryBytes);

export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const { progress } = options;
  progress("verifying the archive");
  // Every entry read whole below was checked against its cap here, from its header, before anything is written.
  const verified = await verifyBackup(options.input, {
    ...(options.basePath ? { basePath: options.basePath } : {}),
    ...(options.maxEntryBytes !== undefined ? { maxEntryBytes: options.maxEntryBytes } : {}),
  });
  if (verified.problems.length) throw new BackupDamagedError(verified.problems);
  const manifest = verified.scan.manifest!;
  const index = Number(manifest.snapshot_index);
  const reader = await ArchiveReader.open(options.input);
  const baseReader = verified.base ? await ArchiveReader.open(verified.base.path) : undefined;
  const blobs = options.s3 ? await bucketBlobs(options.s3) : options.dataDir ? undefined : (() => {
    throw new ConfigError("the blobs need a place: WHARF_BLOB_STORE or --data-dir");
  })();
  try {
    const blobSources: Source[] = verified.scan.entries.filter((e) => e.name.startsWith(blobEntryPrefix))
      .map((entry) => ({ reader, entry }));
    if (baseReader) {
      const wanted = new Set(manifest.base!.blobs.map((s) => `blobs/${s}`));
      for (const entry of verified.base!.scan.entries) {
        if (wanted.has(entry.name)) blobSources.push({ reader: baseReader, entry });
      }
    }
    const rootKeyEntry = verified.scan.entries.find((e) => e.name === "root.key");
    const rootKey = rootKeyEntry ? decoder.decode(await reader.bytes(rootKeyEntry)) : undefined;
    const plan: Plan = {
      options,
      reader,
      all: verified.scan.entries,
      index,
      bucket: blobs,
      blobSources,
      blobNames: new Set(blobSources.map(({ entry }) => entry.name.slice(blobEntryPrefix.length))),
      rootKey,
    };
    const summary: RestoreSummary = {
      index,
      firstIndex: Number(manifest.first_index),
      batches: Number(manifest.batches),
      documents: 0,
      blobs: blobSources.length,
      rootKey: "absent",
    };
    if (options.databaseUrl) {
      summary.documents = await restoreIntoDatabase(plan);
      if (rootKey !== undefined && options.rootKeyOut) {
        await writeSecret(options.rootKeyOut, rootKey);
        summary.rootKey = "written";
      } else if (rootKey !== undefined) summary.rootKey = "not written";
    } else {
      summary.documents = await restoreIntoDataDir(plan);
      if (rootKey !== undefined) summary.rootKey = "written";
    }
    return summary;
  } finally {
    blobs?.close();
    reader.close();
    baseReader?.close();
  }
}

/**
 * The archive's documents per collection, each collection once (its entries in archive order), each entry (at most
 * 10,000 lines, within its cap: entry_caps.ts) read when it is asked for and parsed a batch at a time.
 */
async function* archivedCollections(reader: ArchiveReader, all: ArchiveEntry[]) {
  for (const [collection, entries] of entriesByCollection(all)) {
    yield { collection, batches: documentBatches(reader, entries) };
  }
}

/** The documents entries of each collection, in archive order. */
function entriesByCollection(all: ArchiveEntry[]): Map<string, ArchiveEntry[]> {
  const byCollection = new Map<string, ArchiveEntry[]>();
  for (const entry of all.filter((e) => e.name.startsWith("documents/"))) {
    // documents/<family>/<collection>/<part>.ndjson
    const collection = entry.name.split("/").slice(1, 3).join("/");
    let entries = byCollection.get(collection);
    if (!entries) byCollection.set(collection, entries = []);
    entries.push(entry);
  }
  return byCollection;
}

/**
 * An entry's documents parsed in batches of at most `batchChars` characters of lines (or one longer line): a batch
 * holds at most that many JSON values (each `{`, `[` or `,` is a character), a line at most its cap (verified:
 * entry_caps.ts valueCap), so what a batch's parse builds is bounded whatever the entry's shape.
 */
async function* documentBatches(reader: ArchiveReader, entries: ArchiveEntry[]): AsyncGenerator<StoredDoc[]> {
  for (const entry of entries) {
    let batch: StoredDoc[] = [];
    let chars = 0;
    for await (const line of entryLines(reader, entry)) {
      if (batch.length && chars + line.length > batchChars) {
        yield batch;
        batch = [];
        chars = 0;
      }
      batch.push(JSON.parse(line) as StoredDoc);
      chars += line.length;
    }
    if (batch.length) yield batch;
  }
}

/**
 * The archive's documents one at a time (read an entry at a time, parsed a line at a time), each with the length of
 * its line: importSnapshot cuts its INSERTs by it, so what it holds parsed is bounded as a batch is.
 */
async function* archivedDocuments(reader: ArchiveReader, all: ArchiveEntry[]) {
  for (const [collection, entries] of entriesByCollection(all)) {
    for (const entry of entries) {
      for await (const line of entryLines(reader, entry)) {
        yield { collection, current: JSON.parse(line) as StoredDoc, chars: line.length };
      }
    }
  }
}

/** The archive's log lines in index order, each with its index. */
async function* archivedLog(reader: ArchiveReader, all: ArchiveEntry[]) {
  for (const entry of all.filter((e) => e.name.startsWith("log/"))) {
    for await (const line of entryLines(reader, entry)) {
      yield { index: JSON.parse(line).Index as number, line };
    }
  }
}

/** An ndjson entry's lines, empty ones left out (the entry is read whole: at most its verified cap). */
async function* entryLines(reader: ArchiveReader, entry: ArchiveEntry): AsyncGenerator<string> {
  for (const line of decoder.decode(await reader.bytes(entry)).split("\n")) if (line) yield line;
}

/** The archive's usage counter sets. */
async function* archivedCounters(reader: ArchiveReader, all: ArchiveEntry[]) {
  for (const entry of all.filter((e) => e.name.startsWith("counters/"))) {
    const values = JSON.parse(decoder.decode(await reader.bytes(entry))) as Record<string, number>;
    yield { name: entry.name.slice("counters/".length, -".json".length), values };
  }
}

/**
 * Writes each blob into the bucket, else into `dataDir`'s blobs/ folder, through the store's ingest, which refuses
 * bytes that do not hash to the entry's name. A blob the store already holds at the entry's size (`held`, listed
 * once by refuseBlobs: left by an earlier, failed restore, content-addressed, so the same bytes) is skipped.
 */
async function copyBlobs(plan: Plan, dataDir: string, held: ReadonlyMap<string, number>): Promise<void> {
  const target = plan.bucket ?? folderBlobs(dataDir);
  let done = 0;
  try {
    for (const { reader, entry } of plan.blobSources) {
      const name = entry.name.slice(blobEntryPrefix.length);
      if (held.get(name) !== entry.size) {
        await target.write(name, ReadableStream.from(reader.chunks(entry))).catch((err) => {
          if (!(err instanceof DigestMismatchError)) throw err;
          throw new Error(
            `${entry.name} in ${reader.path} holds other bytes (their sha256 is ${err.actualHex}): ` +
              `the entry and its checksums were rewritten after the backup was made`,
          );
        });
      }
      plan.options.progress(`blobs: ${++done} of ${plan.blobSources.length}`);
    }
  } finally {
    if (target !== plan.bucket) target.close();
  }
}

/** A file only its owner reads, from its creation on, written whole or not at all (fsutil's atomicWrite). */
async function writeSecret(path: string, text: string): Promise<void> {
  await atomicWrite(path, new TextEncoder().encode(text + "\n"));
}

/**
 * Refuses a blob store holding a blob the archive does not name (those it names a failed restore left); returns
 * the size of each of the archive's blobs it holds, from the same single listing.
 */
async function refuseBlobs(plan: Plan, blobs: BlobEndpoint, where: string): Promise<Map<string, number>> {
  const copy = { where, copy: "restore", source: "this archive" };
  return await heldForCopy(blobs, plan.blobNames, copy).catch((err) => {
    throw err instanceof BlobStoreNotEmptyError ? new TargetNotEmptyError(err.message) : err;
  });
}

async function isEmptyDir(path: string): Promise<boolean> {
  try {
    for await (const _ of Deno.readDir(path)) return false;
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return true;
    throw err;
  }
}

/** What a restore writes, read from the verified archive. */
interface Plan {
  options: RestoreOptions;
  reader: ArchiveReader;
  /** Every entry of the archive. */
  all: ArchiveEntry[];
  index: number;
  /** The bucket the blobs go to (WHARF_BLOB_STORE), else the data directory's folder. */
  bucket: BlobEndpoint | undefined;
  blobSources: Source[];
  /** The names of the blobs it writes. */
  blobNames: ReadonlySet<string>;
  rootKey: string | undefined;
}

/** Builds the data directory beside the target and renames it into place; returns the documents written. */
async function restoreIntoDataDir(plan: Plan): Promise<number> {
  const { options, bucket } = plan;
  const target = options.dataDir!.replace(/\/+$/, "");
  if (!await isEmptyDir(target)) {
    throw new TargetNotEmptyError(
      `${target} is not empty: restore writes only into an empty or new directory`,
    );
  }
  // The staging folder is created empty below: only a bucket can already hold blobs.
  const held = bucket ? await refuseBlobs(plan, bucket, options.s3!.url) : new Map<string, number>();
  // Built beside the target and renamed onto it once complete (a rename replaces an empty directory).
  const staging = `${target}.restoring`;
  await Deno.remove(staging, { recursive: true }).catch(() => {});
  await ensureDir(staging);
  let documents: number;
  try {
    documents = await fillDataDir(plan, staging, held);
  } catch (err) {
    // Nothing half-restored stays behind: a refused blob (or any failure) removes what was built.
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  }
  await Deno.rename(staging, target);
  const parent = target.includes("/") ? target.slice(0, target.lastIndexOf("/")) || "/" : ".";
  await syncDir(parent);
  return documents;
}

/** Writes the snapshot into `staging` as a server would have left its data directory; returns the documents. */
async function fillDataDir(
  plan: Plan,
  staging: string,
  held: ReadonlyMap<string, number>,
): Promise<number> {
  const { options, reader, all, index, rootKey } = plan;
  // Streamed into the checkpoint an archive entry at a time: the restore holds a batch, never the archive.
  const documents = await new FileSnapshots(staging, options.packed).writeStreamed(
    archivedCollections(reader, all),
    index,
    (n) => options.progress(`documents: ${n} written`),
  );
  await ensureDir(`${staging}/events`);
  const logEntries = all.filter((e) => e.name.startsWith("log/"));
  for (const entry of logEntries) {
    await atomicWrite(`${staging}/events/${entry.name.slice(4)}`, await reader.bytes(entry));
  }
  // With no retained batch the log continues after the snapshot's index.
  if (!logEntries.length) {
    await atomicWrite(`${staging}/events/${segmentFileName(index + 1)}`, new Uint8Array());
  }
  await syncDir(`${staging}/events`);
  for (const entry of all.filter((e) => e.name.startsWith("counters/"))) {
    await ensureDir(`${staging}/usage`);
    await atomicWrite(`${staging}/usage/${entry.name.slice(9)}`, await reader.bytes(entry));
  }
  await copyBlobs(plan, staging, held);
  if (rootKey !== undefined) {
    await writeSecret(`${staging}/root.key`, rootKey);
  }
  return documents;
}

/**
 * Refuses a database holding wharf data (or a blob store holding other blobs), copies the blobs, then writes the
 * log, documents, counters, head and checkpoint in one transaction (postgres/import.ts importSnapshot): a failure
 * or a kill at any point leaves the database empty, and running the restore again finishes it. Returns the
 * documents written.
 */
async function restoreIntoDatabase(plan: Plan): Promise<number> {
  const { options, reader, all, index, bucket } = plan;
  const { connect, ensureSchema } = await import("../postgres/schema.ts");
  const { DatabaseNotEmptyError, importSnapshot, refuseNonEmpty } = await import("../postgres/import.ts");
  const notEmpty = (err: unknown) => {
    throw err instanceof DatabaseNotEmptyError ? new TargetNotEmptyError(err.message) : err;
  };
  const sql = connect(options.databaseUrl!, { max: 2 });
  try {
    await ensureSchema(sql);
    await refuseNonEmpty(sql).catch(notEmpty);
    const held = await refuseBlobs(
      plan,
      bucket ?? folderBlobs(options.dataDir!),
      options.s3?.url ?? `${options.dataDir}/blobs`,
    );
    // Blobs first: nothing in the database names one before it is in place.
    await copyBlobs(plan, options.dataDir!, held);
    const { progress } = options;
    const written = await importSnapshot(sql, {
      index,
      head: index,
      log: archivedLog(reader, all),
      documents: archivedDocuments(reader, all),
      counters: archivedCounters(reader, all),
      writer: "backup restore",
      progress: {
        log: (n) => progress(`log: ${n} batches written`),
        documents: (n) => progress(`documents: ${n} written`),
        committing: () => progress("committing"),
      },
    }).catch(notEmpty);
    return written.documents;
  } finally {
    await sql.end({ timeout: 2 });
  }
}
