// What the tests of a failed import into a database share (backup restore, storage migrate): the checkpoint row
// held so the import waits at the end of its transaction (to be killed or cut off there), and the wharf rows a
// database holds afterwards.

import type postgres from "postgres";
import { ensureSchema } from "../../lib/store/postgres/schema.ts";
import { eventually } from "./helpers.ts";

/** A database no import has written into: what a failed one must leave. */
export const noWharfRows = { log: 0, documents: 0, counters: 0, head: 0, checkpoint: 0 };

export interface HeldCheckpoint {
  /** Resolves with the pid of the backend waiting on the held row (the import's, well into its writes). */
  waiter(what: string): Promise<number>;
  /** Rolls the holding transaction back: the waiter (if still alive) goes on. */
  release(): Promise<void>;
}

/**
 * Creates the schema as a node starting on the empty database leaves it, then holds wharf_meta's checkpoint row
 * (FOR UPDATE) in a transaction of its own: an import stops at its update of that row, its writes done.
 */
export async function holdCheckpointRow(db: postgres.Sql): Promise<HeldCheckpoint> {
  await ensureSchema(db);
  const hold = await db.reserve();
  await hold`BEGIN`;
  await hold`SELECT value FROM wharf_meta WHERE key = 'checkpoint' FOR UPDATE`;
  return {
    waiter: (what) =>
      eventually(
        `the import waits on the held row (${what})`,
        async () => {
          const [row] = await db`SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
          return row?.pid as number | undefined;
        },
        60_000,
        50,
      ),
    async release() {
      await hold`ROLLBACK`;
      hold.release();
    },
  };
}

/** What a database holds of wharf's: rows of the log, documents and counters, the head and checkpoint index. */
export async function wharfRows(db: postgres.Sql): Promise<Record<string, number>> {
  const [row] = await db`SELECT (SELECT count(*) FROM wharf_log) AS log,
    (SELECT count(*) FROM wharf_documents) AS documents, (SELECT count(*) FROM wharf_counters) AS counters,
    (SELECT last FROM wharf_head) AS head, (SELECT value FROM wharf_meta WHERE key = 'checkpoint') AS checkpoint`;
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)]));
}
