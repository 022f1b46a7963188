// Opens wharf's storage on PostgreSQL: the log table, the documents table and usage counters, with the
// connections each needs (commits, tailing + LISTEN, background work, checkpoint leadership), and runs this
// node's share of the cluster's maintenance.

import { PgCounters } from "./counters.ts";
import { PgLog } from "./log.ts";
import { connect, ensureSchema, type Sql } from "./schema.ts";
import { PgSnapshots } from "./snapshots.ts";
import { ClusterMembership } from "./cluster.ts";
import type { LogTableLimits } from "./retention.ts";
import type { DocumentStore } from "../documents.ts";
import { isDatabaseUnreachable } from "../unavailable.ts";

export { PgLog } from "./log.ts";

export interface PostgresBackend {
  log: PgLog;
  snapshots: PgSnapshots;
  cluster: ClusterMembership;
  counters(name: string): Promise<PgCounters>;
  /**
   * One maintenance tick: the heartbeat, then, on the checkpoint writer only, the checkpoint and log retention;
   * another node learns how far the writer got instead.
   */
  maintain(store: DocumentStore): Promise<void>;
  /** At shutdown: the writer writes a last checkpoint; every node leaves the cluster. */
  finish(store: DocumentStore): Promise<void>;
  close(): Promise<void>;
}

export interface PostgresOptions extends LogTableLimits {
  pollMs?: number;
  /** This node's name (WHARF_NODE_NAME): its row in wharf_nodes and wharf_meta.written_by. */
  nodeName: string;
  /** WHARF_NODE_TIMEOUT: a node silent this long no longer holds log rows back. */
  nodeTimeoutMs: number;
}

let guarded = false;

/**
 * postgres.js under Deno leaves a few connection failures unhandled when the server goes away (a write scheduled
 * on a socket already closed in connection.js, a failed reconnect nobody awaits); each would end the process.
 * The requests involved have their own errors (StorageUnavailableError), so these are swallowed: a node must
 * outlive its database.
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

export async function openPostgres(url: string, options: PostgresOptions): Promise<PostgresBackend> {
  // Commits hold a connection from their locks to COMMIT; tailing has its own, so a node whose commit
  // connections all wait for its view to catch up can still catch up.
  guardClientErrors();
  const sql: Sql = connect(url, { max: 10 });
  const tail: Sql = connect(url, { max: 1 });
  try {
    await ensureSchema(sql);
    const cluster = new ClusterMembership(sql, {
      url,
      nodeName: options.nodeName,
      nodeTimeoutMs: options.nodeTimeoutMs,
    });
    const log = await PgLog.open(sql, tail, {
      retainIndexes: options.retainIndexes,
      retainBytes: options.retainBytes,
      pinBytes: options.pinBytes,
      pollMs: options.pollMs ?? 1000,
      clusterSlowestReader: () => cluster.clusterSlowestReader(),
      commitPool: () => connect(url, { max: 10 }),
      readerPool: () => connect(url, { max: 1 }),
    });
    // Until the first tick, this node holds every row left: it is about to replay those after the checkpoint.
    await cluster.heartbeat(log.firstIndex);
    const snapshots = new PgSnapshots(sql, options.nodeName);
    return {
      log,
      snapshots,
      cluster,
      counters: (name) => PgCounters.open(sql, name),
      async maintain(store) {
        // This node's own view is a reader too: a node that lags keeps the rows it has not applied yet.
        await cluster.heartbeat(Math.min(log.slowestReader(), log.lastIndex + 1));
        if (await cluster.refreshLeadership()) {
          await store.checkpoint({ background: true });
          await log.applyRetention(store.checkpointIndex);
          await cluster.forgetLongGone();
        } else {
          store.checkpointedElsewhere(await snapshots.storedIndex());
          await log.refreshFirstIndex();
        }
      },
      async finish(store) {
        // Asked again: a node closing before its first tick may well be the only one.
        if (await cluster.refreshLeadership()) await store.checkpoint();
        await cluster.leave();
      },
      async close() {
        await log.close();
        await cluster.leave();
        await Promise.all([sql.end({ timeout: 2 }), tail.end({ timeout: 2 })]);
      },
    };
  } catch (err) {
    await Promise.all([sql.end({ timeout: 1 }), tail.end({ timeout: 1 })]);
    throw err;
  }
}
