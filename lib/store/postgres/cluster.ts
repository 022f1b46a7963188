// This node's place in the cluster: a heartbeat row in wharf_nodes carrying its slowest stream reader (so log
// retention on the leader keeps what readers on every live node still need), and checkpoint leadership, a
// session-level advisory lock held by one node's dedicated connection (it moves when that connection dies).

import { connect, type Sql } from "./schema.ts";

/** Advisory lock key (arbitrary constant below 2^31, see #holdsLock) of the checkpoint writer. */
const leaderLockKey = 0x776c6472;
/** A leadership query that takes longer than this counts as a lost connection. */
const leaderQueryMs = 3000;

export interface ClusterOptions {
  url: string;
  nodeName: string;
  /** A node whose heartbeat is older than this no longer holds log rows back (nor leadership, via its lock). */
  nodeTimeoutMs: number;
}

export class ClusterMembership {
  readonly #sql: Sql;
  readonly #options: ClusterOptions;
  /** The leadership connection's client (one connection), replaced when the connection is lost. */
  #lead: Sql | undefined;
  #leader = false;

  constructor(sql: Sql, options: ClusterOptions) {
    this.#sql = sql;
    this.#options = options;
  }

  get nodeName(): string {
    return this.#options.nodeName;
  }

  /** Whether this node writes checkpoints and applies retention (as of the last `refreshLeadership`). */
  get leader(): boolean {
    return this.#leader;
  }

  /** Records this node as alive, with the lowest log Index it still needs to read (undefined: none). */
  async heartbeat(slowestReader: number | undefined): Promise<void> {
    const slowest = slowestReader === undefined || !Number.isFinite(slowestReader) ? null : slowestReader;
    await this.#sql`
      INSERT INTO wharf_nodes (name, slowest_reader, heartbeat, leader)
      VALUES (${this.#options.nodeName}, ${slowest}, now(), ${this.#leader})
      ON CONFLICT (name) DO UPDATE
        SET slowest_reader = excluded.slowest_reader, heartbeat = excluded.heartbeat, leader = excluded.leader`;
  }

  /** Forgets nodes silent for a day (their rows no longer count anyway): run by the checkpoint writer. */
  async forgetLongGone(): Promise<void> {
    await this.#sql`DELETE FROM wharf_nodes WHERE heartbeat < now() - interval '1 day'`;
  }

  /** The lowest Index a stream reader on any live node still needs (Infinity when none). */
  async clusterSlowestReader(): Promise<number> {
    const [row] = await this.#sql`
      SELECT min(slowest_reader) AS slowest FROM wharf_nodes
      WHERE heartbeat > now() - make_interval(secs => ${this.#options.nodeTimeoutMs / 1000})`;
    return row?.slowest === null || row?.slowest === undefined ? Infinity : Number(row.slowest);
  }

  /**
   * Keeps or takes leadership: the lock belongs to the session of this node's leadership connection, so a node
   * that died or lost that connection has let go of it, and the next node to ask takes it.
   */
  async refreshLeadership(): Promise<boolean> {
    try {
      this.#lead ??= connect(this.#options.url, { max: 1, session: true });
      const lead = this.#lead;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const asked = lead`
        SELECT CASE WHEN EXISTS (
                 SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                   AND classid = 0 AND objid = ${leaderLockKey} AND objsubid = 1)
               THEN true ELSE pg_try_advisory_lock(${leaderLockKey}::bigint) END AS leader`;
      const [row] = await Promise.race([
        asked,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("leadership query timed out")), leaderQueryMs);
        }),
      ]).finally(() => clearTimeout(timer));
      this.#leader = row!.leader === true;
    } catch {
      // The connection is gone (or hangs): whatever lock it held goes with it; a fresh one asks next time.
      this.#leader = false;
      const lost = this.#lead;
      this.#lead = undefined;
      lost?.end({ timeout: 0 }).catch(() => {});
    }
    return this.#leader;
  }

  /** Gives up leadership (closing its connection releases the lock at once) and removes this node's row. */
  async leave(): Promise<void> {
    this.#leader = false;
    const lead = this.#lead;
    this.#lead = undefined;
    await lead?.end({ timeout: 1 }).catch(() => {});
    await this.#sql`DELETE FROM wharf_nodes WHERE name = ${this.#options.nodeName}`.catch(() => {});
  }
}
