// `storage migrate`: copies an embedded data directory (the retained log with its indexes, documents, usage
// counters, blobs) into the PostgreSQL database and blob store a node would use, verifies the copy (counts and
// checksums) and refuses a database that already holds wharf data. Documents are read from the checkpoint one
// collection at a time and written in pages (the log after the checkpoint is replayed by the nodes), so the
// whole set is never in memory at once.

import { createHash } from "node:crypto";
import { ConfigError } from "../errors.ts";
import type { Blobs } from "./blobs.ts";
import { lockDataDir, type S3Settings } from "./data_dir.ts";
import { EventLog } from "./file/eventlog.ts";
import { readDirOrEmpty } from "./file/fsutil.ts";
import type { StoredDoc } from "./doc_types.ts";
import { collectionFolders, readCheckpointIndex, readCollectionFolder } from "./file/collection_folder.ts";
import { connect, ensureSchema, type Sql } from "./postgres/schema.ts";
import { PgSnapshots } from "./postgres/snapshots.ts";

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

const rowsPerInsert = 500;
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
    await sql.begin(async (tx) => {
      let rows: Array<{ i: number; l: string }> = [];
      const flush = async () => {
        if (!rows.length) return;
        await tx`INSERT INTO wharf_log (idx, line)
          SELECT i, l FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(i bigint, l text)`;
        rows = [];
        progress(`log: ${summary.batches} batches copied`);
      };
      for await (const { index, line } of log.read(1)) {
        rows.push({ i: index, l: line });
        sourceLog.update(`${index}\n${line}\n`);
        summary.batches++;
        if (rows.length >= rowsPerInsert) await flush();
      }
      await flush();
      await tx`UPDATE wharf_head SET last = ${summary.lastIndex}`;
    });
    summary.documents = await copyDocuments(sql, options.dataDir, checkpointIndex, progress);
    progress(`documents: ${summary.documents} copied (checkpoint at index ${checkpointIndex})`);
    summary.counters = await copyCounters(sql, `${options.dataDir}/usage`);
    progress(`usage counters: ${summary.counters} copied`);
    if (options.s3) summary.blobs = await copyBlobs(`${options.dataDir}/blobs`, options.s3, progress);
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

/** Throws ConfigError when the database already holds wharf data (a log, documents or counters). */
export async function refuseNonEmpty(sql: Sql): Promise<void> {
  const [row] = await sql`SELECT (SELECT last FROM wharf_head) AS last,
    (SELECT count(*) FROM wharf_documents) AS docs, (SELECT count(*) FROM wharf_counters) AS counters`;
  if (Number(row!.last) > 0 || Number(row!.docs) > 0 || Number(row!.counters) > 0) {
    throw new ConfigError(
      "the database already holds wharf data: storage migrate writes only into an empty one",
    );
  }
}

async function copyCounters(sql: Sql, dir: string): Promise<number> {
  let copied = 0;
  for (const entry of readDirOrEmpty(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const values = JSON.parse(await Deno.readTextFile(`${dir}/${entry.name}`)) as Record<string, number>;
    const rows = Object.entries(values).map(([k, v]) => ({ k, v }));
    if (!rows.length) continue;
    await sql`INSERT INTO wharf_counters (name, key, value)
      SELECT ${entry.name.slice(0, -5)}, k, v FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS x(k text, v float8)`;
    copied += rows.length;
  }
  return copied;
}

async function copyBlobs(
  dir: string,
  settings: S3Settings,
  progress: (line: string) => void,
): Promise<number> {
  const { createS3Client, ensureBucket, parseBlobStore } = await import("./s3/client.ts");
  const { S3BlobStore } = await import("./s3/blobs.ts");
  const location = parseBlobStore(settings.url);
  const client = createS3Client(settings.env);
  await ensureBucket(client, location.bucket);
  const target: Blobs = new S3BlobStore(client, location, { downloads: "proxy", urlTtlMs: 60_000 });
  let copied = 0;
  try {
    for (const shard of readDirOrEmpty(dir)) {
      if (!shard.isDirectory || !/^[0-9a-f]{2}$/.test(shard.name)) continue;
      for (const entry of readDirOrEmpty(`${dir}/${shard.name}`)) {
        if (!/^[0-9a-f]{64}$/.test(entry.name)) continue;
        const file = await Deno.open(`${dir}/${shard.name}/${entry.name}`, { read: true });
        // Streamed through the same ingest as an upload: the sha256 computed on the way verifies the copy.
        const blob = await target.ingest(file.readable, {
          maxBytes: Number.MAX_SAFE_INTEGER,
          digests: ["sha256"],
        });
        if (blob.sha256 !== entry.name) throw new Error(`blob ${entry.name} reads back as ${blob.sha256}`);
        copied++;
        progress(`blobs: ${copied} copied (${entry.name}, ${blob.size} bytes)`);
      }
    }
  } finally {
    target.close();
    client.destroy();
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
