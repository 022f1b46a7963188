// `storage migrate`: copies an embedded data directory (the retained log with its indexes, documents, usage
// counters, blobs) into the PostgreSQL database and blob store a node would use, verifies the copy (counts and
// checksums) and refuses a database that already holds wharf data. Documents are read from the checkpoint one
// collection at a time and written in pages (the log after the checkpoint is replayed by the nodes), so the
// whole set is never in memory at once.

import { createHash } from "node:crypto";
import { lockDataDir, type S3Settings } from "./data_dir.ts";
import { EventLog } from "./file/eventlog.ts";
import { readDirOrEmpty } from "./file/fsutil.ts";
import type { StoredDoc } from "./doc_types.ts";
import { collectionFolders, readCheckpointIndex, readCollectionFolder } from "./file/collection_folder.ts";
import { connect, ensureSchema, type Sql } from "./postgres/schema.ts";
import { importCounters, importLog, refuseNonEmpty } from "./postgres/import.ts";
import { PgSnapshots } from "./postgres/snapshots.ts";
import { bucketBlobs, folderBlobs } from "./blob_endpoints.ts";

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

/** Documents written per transaction. */
const documentsPerPage = 2000;

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
    const sourceLog = createHash("sha256");
    summary.batches = await importLog(
      sql,
      hashedLines(log, sourceLog),
      summary.lastIndex,
      (copied) => progress(`log: ${copied} batches copied`),
    );
    summary.documents = await copyDocuments(sql, options.dataDir, checkpointIndex, progress);
    progress(`documents: ${summary.documents} copied (checkpoint at index ${checkpointIndex})`);
    summary.counters = await copyCounters(sql, `${options.dataDir}/usage`);
    progress(`usage counters: ${summary.counters} copied`);
    if (options.s3) summary.blobs = await copyBlobs(options.dataDir, options.s3, progress);
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

/** Writes the checkpointed documents as the database's checkpoint at `checkpointIndex`, a collection at a time. */
async function copyDocuments(
  sql: Sql,
  dataDir: string,
  checkpointIndex: number,
  progress: (line: string) => void,
): Promise<number> {
  const snapshots = new PgSnapshots(sql);
  let copied = 0;
  for (const { collection, dir } of collectionFolders(dataDir)) {
    const docs = new Map<string, StoredDoc>();
    readCollectionFolder(dir, docs);
    let page: Array<{ collection: string; id: string; current: StoredDoc }> = [];
    for (const current of docs.values()) {
      page.push({ collection, id: current.id, current });
      if (page.length < documentsPerPage) continue;
      await snapshots.write(page, checkpointIndex);
      page = [];
    }
    if (page.length) await snapshots.write(page, checkpointIndex);
    copied += docs.size;
    if (docs.size) progress(`documents: ${collection}: ${docs.size} copied`);
  }
  return copied;
}

async function copyCounters(sql: Sql, dir: string): Promise<number> {
  let copied = 0;
  for (const entry of readDirOrEmpty(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const values = JSON.parse(await Deno.readTextFile(`${dir}/${entry.name}`)) as Record<string, number>;
    copied += await importCounters(sql, entry.name.slice(0, -5), values);
  }
  return copied;
}

/** Streams every blob of the data directory into the bucket, through the ingest that checks each one's name. */
async function copyBlobs(
  dataDir: string,
  settings: S3Settings,
  progress: (line: string) => void,
): Promise<number> {
  const source = folderBlobs(dataDir);
  const target = await bucketBlobs(settings);
  let copied = 0;
  try {
    for (const name of source.names()) {
      const blob = await source.read(name);
      if (!blob) throw new Error(`blob ${name} went missing while it was copied`);
      await target.write(name, blob.body);
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
