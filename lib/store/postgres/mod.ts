// Opens wharf's storage on PostgreSQL: the log table, the documents table and usage counters, with the
// connections each needs (commits, tailing + LISTEN, background work).

import { PgCounters } from "./counters.ts";
import { PgLog } from "./log.ts";
import { connect, ensureSchema, type Sql } from "./schema.ts";
import { PgSnapshots } from "./snapshots.ts";
import { isDatabaseUnreachable } from "../unavailable.ts";

export { PgLog } from "./log.ts";

export interface PostgresBackend {
  log: PgLog;
  snapshots: PgSnapshots;
  counters(name: string): Promise<PgCounters>;
  close(): Promise<void>;
}

let guarded = false;

/**
 * postgres.js under Deno leaves a few connection failures unhandled when the server goes away (a write scheduled
 * on a socket already closed in connection.js, a failed reconnect nobody awaits); each would end the process.
 * The requests involved have their own errors (503), so these are swallowed: a node must outlive its database.
 */
function guardClientErrors(): void {
  if (guarded) return;
  guarded = true;
  const fromClient = (err: unknown) => {
    if (!(err instanceof Error)) return false;
    const stack = err.stack ?? "";
    const code = (err as { code?: unknown }).code;
    return /registry\.npmjs\.org\/postgres\//.test(stack) ||
      (typeof code === "string" && isDatabaseUnreachable(err) && !/\/lib\/|\/routes\//.test(stack));
  };
  globalThis.addEventListener("error", (e) => {
    if (fromClient(e.error)) e.preventDefault();
  });
  globalThis.addEventListener("unhandledrejection", (e) => {
    if (fromClient(e.reason)) e.preventDefault();
  });
}

export async function openPostgres(
  url: string,
  options: { retainIndexes: number; pollMs?: number },
): Promise<PostgresBackend> {
  // Commits hold a connection from their locks to COMMIT; tailing has its own, so a node whose commit
  // connections all wait for its view to catch up can still catch up.
  guardClientErrors();
  const sql: Sql = connect(url, { max: 10 });
  const tail: Sql = connect(url, { max: 1 });
  try {
    await ensureSchema(sql);
    const log = await PgLog.open(sql, tail, {
      retainIndexes: options.retainIndexes,
      pollMs: options.pollMs ?? 1000,
      commitPool: () => connect(url, { max: 10 }),
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
