// The documents table: the checkpoint a new node starts from (then it replays the log table after it).

import type { StoredDoc } from "../doc_types.ts";
import type { DocSnapshots, SnapshotEntry } from "../snapshots.ts";
import type { Queries, Sql } from "./schema.ts";

/** Rows written per statement: bounded so a large checkpoint never builds one huge parameter. */
const rowsPerStatement = 2000;

export class PgSnapshots implements DocSnapshots {
  readonly #sql: Sql;
  /** Recorded with each checkpoint in wharf_meta.written_by (the node name). */
  readonly #writer: string;

  constructor(sql: Sql, writer: string) {
    this.#sql = sql;
    this.#writer = writer;
  }

  /** The Index of the checkpoint the documents table holds (whoever wrote it). */
  async storedIndex(): Promise<number> {
    const [meta] = await this.#sql`SELECT value FROM wharf_meta WHERE key = 'checkpoint'`;
    return Number(meta?.value ?? 0);
  }

  async load(): Promise<{ checkpointIndex: number; docs: Array<{ collection: string; stored: StoredDoc }> }> {
    // One snapshot for the checkpoint index and the rows, so they agree.
    return await this.#sql.begin("ISOLATION LEVEL REPEATABLE READ", async (tx) => {
      const [meta] = await tx`SELECT value FROM wharf_meta WHERE key = 'checkpoint'`;
      const rows = await tx`
        SELECT collection, id, version, idx, doc FROM wharf_documents WHERE doc IS NOT NULL ORDER BY idx, id`;
      return {
        checkpointIndex: Number(meta?.value ?? 0),
        docs: rows.map((r) => ({
          collection: r.collection as string,
          stored: {
            id: r.id as string,
            version: r.version as number,
            index: Number(r.idx),
            doc: JSON.parse(r.doc),
          },
        })),
      };
    });
  }

  async write(entries: SnapshotEntry[], upTo: number): Promise<void> {
    await this.#sql.begin(async (tx) => {
      await writeDocumentRows(tx, entries, upTo);
      await recordCheckpoint(tx, upTo, this.#writer);
    });
  }
}

/** Writes `entries` into the documents table in `tx`, never over a newer state another node checkpointed. */
export async function writeDocumentRows(tx: Queries, entries: SnapshotEntry[], upTo: number): Promise<void> {
  for (let i = 0; i < entries.length; i += rowsPerStatement) {
    const rows = entries.slice(i, i + rowsPerStatement).map((e) => ({
      c: e.collection,
      id: e.id,
      v: e.current?.version ?? 0,
      // A deletion is recorded at the checkpoint's index: the document was absent at upTo.
      i: e.current?.index ?? upTo,
      d: e.current ? JSON.stringify(e.current.doc) : null,
    }));
    await tx`
      INSERT INTO wharf_documents (collection, id, version, idx, doc)
      SELECT c, id, v, i, d FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS x(c text, id text, v int, i bigint, d text)
      ON CONFLICT (collection, id) DO UPDATE
        SET version = excluded.version, idx = excluded.idx, doc = excluded.doc
        WHERE wharf_documents.idx <= excluded.idx`;
  }
}

/** Records in `tx` that the documents table holds the checkpoint at `upTo` (never lowering it), by `writer`. */
export async function recordCheckpoint(tx: Queries, upTo: number, writer: string): Promise<void> {
  await tx`
    UPDATE wharf_meta SET value = GREATEST(value, ${upTo}), written_by = ${writer}, written_at = now()
    WHERE key = 'checkpoint'`;
}
