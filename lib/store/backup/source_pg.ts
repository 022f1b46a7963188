// Reads a consistent snapshot of a cluster's database: one REPEATABLE READ, READ ONLY transaction sees the head,
// the checkpointed documents, the retained log rows and the counters as of one moment, so the documents
// replayed to the head are exactly the state at that index. Nodes keep committing meanwhile: the transaction
// takes no lock a commit waits for. The documents are read through a cursor, a page at a time, while the
// caller writes them: the snapshot is used inside the transaction, never held.

import type { Sql } from "../postgres/schema.ts";
import type { StoredDoc } from "../doc_types.ts";
import { applyDocs } from "./source_file.ts";
import type { LogLine, SourceSnapshot } from "./source.ts";
import { blobsNamedBy } from "./blob_refs.ts";

const rowsPerRead = 1000;
/** Documents are larger than most log rows: a cursor's page of them is ~5 MB of 48 KB documents. */
const documentsPerRead = 100;

/** Reads the snapshot and hands it to `use` inside its transaction; returns what `use` returns. */
export async function readClusterSnapshot<T>(
  sql: Sql,
  onLine: (line: LogLine) => Promise<void>,
  use: (snapshot: SourceSnapshot) => Promise<T>,
): Promise<T> {
  let result: { value: T } | undefined;
  await sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const [head] = await tx`SELECT last FROM wharf_head`;
    const [meta] = await tx`SELECT value FROM wharf_meta WHERE key = 'checkpoint'`;
    const lastIndex = Number(head?.last ?? 0);
    const checkpointIndex = Number(meta?.value ?? 0);
    const listed = await tx`SELECT DISTINCT collection FROM wharf_documents WHERE doc IS NOT NULL`;
    const snapshot: SourceSnapshot = {
      checkpointIndex,
      firstIndex: 0,
      lastIndex,
      collections: listed.map((r) => r.collection as string),
      // As the old in-memory sort had them: by index, then id (code units; "C" is their order for the BMP).
      checkpointed: async function* (collection) {
        const rows = tx`
          SELECT id, version, idx, doc FROM wharf_documents WHERE collection = ${collection} AND doc IS NOT NULL
          ORDER BY idx, id COLLATE "C"`.cursor(documentsPerRead);
        for await (const page of rows) {
          for (const r of page) {
            const stored: StoredDoc = {
              id: r.id,
              version: r.version,
              index: Number(r.idx),
              doc: JSON.parse(r.doc),
            };
            yield { id: stored.id, line: JSON.stringify(stored), blobs: blobsNamedBy(stored.doc) };
          }
        }
      },
      written: new Map(),
      counters: new Map(),
    };
    let after = 0;
    for (;;) {
      const page = await tx`
        SELECT idx, line FROM wharf_log WHERE idx > ${after} AND idx <= ${lastIndex} ORDER BY idx LIMIT ${rowsPerRead}`;
      for (const r of page) {
        const index = Number(r.idx);
        if (after === 0) {
          if (index > checkpointIndex + 1) {
            throw new Error(`the log table starts at ${index}, after the checkpoint (${checkpointIndex})`);
          }
          snapshot.firstIndex = index;
        } else if (index !== after + 1) throw new Error(`the log table skips from ${after} to ${index}`);
        if (index > checkpointIndex) applyDocs(snapshot.written, index, JSON.parse(r.line).Docs ?? []);
        await onLine({ index, line: r.line });
        after = index;
      }
      if (page.length < rowsPerRead) break;
    }
    if (after !== lastIndex && lastIndex > checkpointIndex) {
      throw new Error(`the log table ends at ${after}, before the head (${lastIndex})`);
    }
    if (snapshot.firstIndex === 0) snapshot.firstIndex = lastIndex + 1;
    const counterRows = await tx`SELECT name, key, value FROM wharf_counters`;
    for (const r of counterRows) {
      let set = snapshot.counters.get(r.name);
      if (!set) snapshot.counters.set(r.name, set = {});
      set[r.key] = Number(r.value);
    }
    result = { value: await use(snapshot) };
  });
  return result!.value;
}
