// Opens wharf's storage on PostgreSQL: the log table, the documents table and usage counters, with the
// connections each needs (commits, tailing + LISTEN, background work).

import { PgCounters } from "./counters.ts";
import { PgLog } from "./log.ts";
import { connect, ensureSchema, type Sql } from "./schema.ts";
import { PgSnapshots } from "./snapshots.ts";

export { PgLog } from "./log.ts";

export interface PostgresBackend {
  log: PgLog;
  snapshots: PgSnapshots;
  counters(name: string): Promise<PgCounters>;
  close(): Promise<void>;
}

export async function openPostgres(
  url: string,
  options: { retainIndexes: number; pollMs?: number },
): Promise<PostgresBackend> {
  // Commits hold a connection from their locks to COMMIT; tailing has its own, so a node whose commit
  // connections all wait for its view to catch up can still catch up.
  const sql: Sql = connect(url, { max: 10 });
  const tail: Sql = connect(url, { max: 1 });
  try {
    await ensureSchema(sql);
    const log = await PgLog.open(sql, tail, {
      retainIndexes: options.retainIndexes,
      pollMs: options.pollMs ?? 1000,
    });
    return {
      log,
      snapshots: new PgSnapshots(sql),
      counters: (name) => PgCounters.open(sql, name),
      async close() {
        await log.close();
        await Promise.all([sql.end({ timeout: 2 }), tail.end({ timeout: 2 })]);
      },
    };
  } catch (err) {
    await Promise.all([sql.end({ timeout: 1 }), tail.end({ timeout: 1 })]);
    throw err;
  }
}
