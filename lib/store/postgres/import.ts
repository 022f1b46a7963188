// Bulk writes into an empty database, shared by `storage migrate` and `backup restore`: the refusal of a database
// that already holds wharf data, and a whole snapshot (log, documents, usage counters, head, checkpoint) written in
// one transaction.

import { ConfigError } from "../../errors.ts";
import type { StoredDoc } from "../doc_types.ts";
import type { Queries, Sql } from "./schema.ts";
import { recordCheckpoint, writeDocumentRows } from "./snapshots.ts";

/** Log lines written per INSERT. */
const rowsPerInsert = 500;
/** Documents written per INSERT (snapshots.ts cuts them again at its own bound)... */
const documentsPerInsert = 2000;
/** ...or fewer, once their JSON (as the source gives its length) reaches this many characters. */
const documentCharsPerInsert = 1 << 20;

export interface LogRow {
  index: number;
  line: string;
}

/** The database already holds wharf data: nothing was written (a ConfigError: `storage migrate` exits 2). */
export class DatabaseNotEmptyError extends ConfigError {
  constructor() {
    super("the database already holds wharf data: it is written only when empty");
    this.name = "DatabaseNotEmptyError";
  }
}

/** Throws DatabaseNotEmptyError when the database already holds wharf data (a log, documents or counters). */
export async function refuseNonEmpty(sql: Queries): Promise<void> {
  const [row] = await sql`SELECT (SELECT last FROM wharf_head) AS last,
    (SELECT count(*) FROM wharf_documents) AS docs, (SELECT count(*) FROM wharf_counters) AS counters`;
  if (Number(row!.last) > 0 || Number(row!.docs) > 0 || Number(row!.counters) > 0) {
    throw new DatabaseNotEmptyError();
  }
}

/** INSERTs `lines` in pages of `rowsPerInsert`; returns how many. */
async function insertLog(
  tx: Queries,
  lines: AsyncIterable<LogRow>,
  written: (count: number) => void,
): Promise<number> {
  let count = 0;
  let rows: Array<{ i: number; l: string }> = [];
  const flush = async () => {
    if (!rows.length) return;
    await tx`INSERT INTO wharf_log (idx, line)
      SELECT i, l FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(i bigint, l text)`;
    rows = [];
    written(count);
  };
  for await (const { index, line } of lines) {
    rows.push({ i: index, l: line });
    count++;
    if (rows.length >= rowsPerInsert) await flush();
  }
  await flush();
  return count;
}

/** Adds usage counter `name`'s values (a counters file as the embedded store flushes it); returns how many. */
async function importCounters(
  sql: Queries,
  name: string,
  values: Record<string, number>,
): Promise<number> {
  const rows = Object.entries(values).map(([k, v]) => ({ k, v }));
  if (!rows.length) return 0;
  await sql`INSERT INTO wharf_counters (name, key, value)
    SELECT ${name}, k, v FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(k text, v float8)`;
  return rows.length;
}

/**
 * A snapshot as `importSnapshot` reads it, from a backup archive or a stopped server's data directory: each part
 * streamed, so none is ever whole in memory.
 */
export interface SnapshotRows {
  /** The index the documents are checkpointed at. */
  index: number;
  /**
   * The head: the log's last index (an archive's log ends at `index`; a data directory's may run past its
   * checkpoint, and the nodes replay those rows).
   */
  head: number;
  /** The retained log lines in index order. */
  log: AsyncIterable<LogRow>;
  /**
   * Every document as of `index`; `chars`, when the source knows it, the length of the JSON it was parsed from (an
   * INSERT is cut by it too, so a page of parsed documents is bounded by their text, not only by their number).
   */
  documents: AsyncIterable<{ collection: string; current: StoredDoc; chars?: number }>;
  /** Usage counter sets: name → key → value. */
  counters: AsyncIterable<{ name: string; values: Record<string, number> }>;
  /** Recorded as the checkpoint's writer (wharf_meta.written_by). */
  writer: string;
  progress: ImportProgress;
}

/** What `importSnapshot` reports as it goes (each command words it its own way). */
export interface ImportProgress {
  /** After each INSERT of log lines: how many so far. */
  log(written: number): void;
  /** After each INSERT of documents: how many so far. */
  documents(written: number): void;
  /** Everything is written; the transaction commits next. */
  committing(): void;
}

/**
 * Writes a whole snapshot into an empty database in ONE transaction: first the head row is locked and the
 * database checked empty again (a concurrent import waits, then is refused), then the log, the documents, the
 * counters, the head and the checkpoint. A failure, a kill or a lost connection at any point rolls all of it back,
 * leaving the database as empty as it was. Throws DatabaseNotEmptyError when it is not empty.
 */
export async function importSnapshot(
  sql: Sql,
  snapshot: SnapshotRows,
): Promise<{ batches: number; documents: number; counters: number }> {
  const { progress } = snapshot;
  return await sql.begin(async (tx) => {
    await tx`SELECT last FROM wharf_head FOR UPDATE`;
    await refuseNonEmpty(tx);
    const batches = await insertLog(tx, snapshot.log, progress.log);
    let documents = 0;
    let page: Array<{ collection: string; id: string; current: StoredDoc }> = [];
    let pageChars = 0;
    const flush = async () => {
      await writeDocumentRows(tx, page, snapshot.index);
      documents += page.length;
      page = [];
      pageChars = 0;
      progress.documents(documents);
    };
    for await (const { collection, current, chars } of snapshot.documents) {
      page.push({ collection, id: current.id, current });
      pageChars += chars ?? 0;
      if (page.length >= documentsPerInsert || pageChars >= documentCharsPerInsert) await flush();
    }
    await flush();
    let counters = 0;
    for await (const { name, values } of snapshot.counters) {
      counters += await importCounters(tx, name, values);
    }
    await tx`UPDATE wharf_head SET last = ${snapshot.head}`;
    await recordCheckpoint(tx, snapshot.index, snapshot.writer);
    progress.committing();
    return { batches, documents, counters };
  });
}
