// `storage migrate`: copies an embedded data directory (the retained log with its indexes, documents, usage
// counters, blobs) into the PostgreSQL database and blob store a node would use, verifies the copy (counts and
// checksums) and refuses a database that already holds wharf data, or a bucket holding blobs the data directory
// does not (as `backup restore` refuses one, blob_endpoints.ts heldForCopy). The blobs go first; then the log, the
// documents, the counters, the head and the checkpoint are written in ONE transaction (postgres/import.ts
// importSnapshot, as `backup restore` writes an archive), so a failed or killed migrate leaves the database as
// empty as it found it and running it again finishes the job. Documents are read from the checkpoint one
// collection at a time and written in pages (the log after the checkpoint is replayed by the nodes), so the
// whole set is never in memory at once.

import { createHash } from "node:crypto";
import { lockDataDir, type S3Settings } from "./data_dir.ts";
import { EventLog } from "./file/eventlog.ts";
import { readDirOrEmpty } from "./file/fsutil.ts";
import type { StoredDoc } from "./doc_types.ts";
import { collectionFolders, readCheckpointIndex, readCollectionFolder } from "./file/collection_folder.ts";
import { connect, ensureSchema, type Sql } from "./postgres/schema.ts";
import { importSnapshot, refuseNonEmpty } from "./postgres/import.ts";
import { bucketBlobs, folderBlobs, heldForCopy } from "./blob_endpoints.ts";

export interface MigrateOptions {
  dataDir: string;
  databaseUrl: string;
  s3?: S3Settings;
  progress(line: string): void;
}

export interface MigrateSummary {
  batches: number;
  firstIndex: number;
  lastIndex: number;
  documents: number;
  counters: number;
  blobs: number;
}

export async function migrateDataDir(options: MigrateOptions): Promise<MigrateSummary> {
  const { progress } = options;
  // The source is locked as a server locks it (it must not be running); only its log is opened, never written.
  const lock = await lockDataDir(options.dataDir);
  let log: EventLog;
  try {
    log = await EventLog.open(`${options.dataDir}/events`);
  } catch (err) {
    lock.close();
    throw err;
  }
  const sql = connect(options.databaseUrl, { max: 2 });
  try {
    const checkpointIndex = await readCheckpointIndex(options.dataDir);
    if (
      checkpointIndex > log.lastIndex ||
      (checkpointIndex < log.lastIndex && log.firstIndex > checkpointIndex + 1)
    ) {
      throw new Error(
        `the documents are checkpointed at index ${checkpointIndex} but the log holds ${log.firstIndex}-${log.lastIndex}`,
      );
    }
    await ensureSchema(sql);
    await refuseNonEmpty(sql);
    const summary: MigrateSummary = {
      batches: 0,
      firstIndex: log.firstIndex,
      lastIndex: log.lastIndex,
      documents: 0,
      counters: 0,
      blobs: 0,
    };
    // Blobs first: nothing in the database names one before it is in place.
    if (options.s3) summary.blobs = await copyBlobs(options.dataDir, options.s3, progress);
    const sourceLog = createHash("sha256");
    const written = await importSnapshot(sql, {
      index: checkpointIndex,
      head: summary.lastIndex,
      log: hashedLines(log, sourceLog),
      documents: checkpointedDocuments(options.dataDir, progress),
      counters: counterFiles(`${options.dataDir}/usage`),
      writer: "storage migrate",
      progress: {
        log: (copied) => progress(`log: ${copied} batches copied`),
        documents: () => {},
        committing: () => {},
      },
    });
    summary.batches = written.batches;
    summary.documents = written.documents;
    summary.counters = written.counters;
    progress(`documents: ${summary.documents} copied (checkpoint at index ${checkpointIndex})`);
    progress(`usage counters: ${summary.counters} copied`);
    await verify(sql, summary, sourceLog.digest("hex"));
    progress(
      `verified: ${summary.batches} batches (indexes ${summary.firstIndex}-${summary.lastIndex}), ` +
        `${summary.documents} documents, ${summary.counters} counters, ${summary.blobs} blobs`,
    );
    return summary;
  } finally {
    await sql.end({ timeout: 2 });
    await log.close();
    lock.close();
  }
}

/** The log's lines from its oldest, each also fed to `hash` (the copy's verification compares it). */
async function* hashedLines(log: EventLog, hash: ReturnType<typeof createHash>) {
  for await (const read of log.read(1)) {
    hash.update(`${read.index}\n${read.line}\n`);
    yield read;
  }
}

/** The checkpointed documents, read one collection at a time (each one's count reported once it is read). */
async function* checkpointedDocuments(dataDir: string, progress: (line: string) => void) {
  for (const { collection, dir } of collectionFolders(dataDir)) {
    const docs = new Map<string, StoredDoc>();
    readCollectionFolder(dir, docs);
    for (const current of docs.values()) yield { collection, current };
    if (docs.size) progress(`documents: ${collection}: ${docs.size} copied`);
  }
}

/** The usage counter sets the embedded store flushed into `dir` (one JSON file each). */
async function* counterFiles(dir: string) {
  for (const entry of readDirOrEmpty(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const values = JSON.parse(await Deno.readTextFile(`${dir}/${entry.name}`)) as Record<string, number>;
    yield { name: entry.name.slice(0, -5), values };
  }
}

/**
 * Streams every blob of the data directory into the bucket, through the ingest that checks each one's name. A
 * blob the bucket already holds at its size (left by an earlier, failed migrate: content-addressed, so the same
 * bytes; the bucket is listed once, not asked for each blob) is not copied again; a bucket holding any other blob
 * is refused before anything is copied. Returns how many blobs the bucket now holds of the data directory's.
 */
async function copyBlobs(
  dataDir: string,
  settings: S3Settings,
  progress: (line: string) => void,
): Promise<number> {
  const source = folderBlobs(dataDir);
  const target = await bucketBlobs(settings);
  let copied = 0;
  try {
    const names = new Set(source.names());
    const copy = { where: settings.url, copy: "migrate", source: "this data directory" };
    const sizes = await heldForCopy(target, names, copy);
    for (const name of names) {
      // One stat per blob: read() opens the file and takes its size from the open file.
      const blob = await source.read(name);
      if (!blob) throw new Error(`blob ${name} went missing while it was copied`);
      if (sizes.get(name) !== blob.size) await target.write(name, blob.body);
      else await blob.body.cancel();
      copied++;
      progress(`blobs: ${copied} copied (${name}, ${blob.size} bytes)`);
    }
  } finally {
    target.close();
  }
  return copied;
}

async function verify(sql: Sql, summary: MigrateSummary, sourceLogHash: string): Promise<void> {
  const hash = createHash("sha256");
  let batches = 0;
  let after = 0;
  for (;;) {
    const rows = await sql`SELECT idx, line FROM wharf_log WHERE idx > ${after} ORDER BY idx LIMIT 1000`;
    if (!rows.length) break;
    for (const r of rows) {
      hash.update(`${r.idx}\n${r.line}\n`);
      batches++;
      after = Number(r.idx);
    }
  }
  const [docs] = await sql`SELECT count(*) AS n FROM wharf_documents WHERE doc IS NOT NULL`;
  const [counters] = await sql`SELECT count(*) AS n FROM wharf_counters`;
  const problems: string[] = [];
  if (batches !== summary.batches || hash.digest("hex") !== sourceLogHash) problems.push("the log differs");
  if (Number(docs!.n) !== summary.documents) {
    problems.push(`${docs!.n} documents instead of ${summary.documents}`);
  }
  if (Number(counters!.n) !== summary.counters) {
    problems.push(`${counters!.n} counters instead of ${summary.counters}`);
  }
  if (problems.length) throw new Error(`verification failed: ${problems.join("; ")}`);
}
