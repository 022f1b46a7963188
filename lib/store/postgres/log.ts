// The PostgreSQL log table as the commit point shared by every node: a commit allocates its Index under the
// wharf_head row lock inside its own transaction (so indexes commit in order, without gaps), and every node
// tails the table (LISTEN/NOTIFY to wake, SELECT … WHERE idx > n to read) to keep its in-memory view.

import type { AppendBatch, CommitLog } from "../commit_log.ts";
import type { BatchBody, CommittedBatch, LogCursor, LogRecord } from "../eventlog.ts";
import { LogClosedError } from "../eventlog.ts";
import { LogFollowers } from "../log_followers.ts";
import type { Sql } from "./schema.ts";
import { isDatabaseUnreachable, StorageUnavailableError } from "../unavailable.ts";

const channel = "wharf_log";
const pullRows = 1000;
/** How long a commit waits for this node's view to catch up before it answers 503. */
const catchUpMs = 10_000;

export interface PgLogOptions {
  retainIndexes: number;
  /** Poll this often even without a notification (a lost LISTEN connection must not stall a node). */
  pollMs: number;
}

export class PgLog implements CommitLog {
  readonly #sql: Sql;
  readonly #tail: Sql;
  readonly #options: PgLogOptions;
  #applied = 0;
  #first = 1;
  #follower: ((batch: CommittedBatch) => void) | undefined;
  readonly #followers = new LogFollowers();
  #waiters: Array<{ index: number; resolve: () => void; reject: (err: unknown) => void }> = [];
  #pulling: Promise<void> | undefined;
  #again = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;
  #announced = 0;
  /** When the last pull failed (the database unreachable), for /health. */
  lastError: unknown;

  private constructor(sql: Sql, tail: Sql, options: PgLogOptions) {
    this.#sql = sql;
    this.#tail = tail;
    this.#options = options;
  }

  /** Opens the log at the newest committed Index; tailing starts when the document store follows it. */
  static async open(sql: Sql, tail: Sql, options: PgLogOptions): Promise<PgLog> {
    const log = new PgLog(sql, tail, options);
    const [head] = await sql`SELECT last, (SELECT min(idx) FROM wharf_log) AS first FROM wharf_head`;
    log.#applied = Number(head!.last);
    log.#first = head!.first === null ? log.#applied + 1 : Number(head!.first);
    return log;
  }

  get lastIndex(): number {
    return this.#applied;
  }

  get firstIndex(): number {
    return Math.min(this.#first, this.#applied + 1);
  }

  follow(apply: (batch: CommittedBatch) => void): void {
    this.#follower = apply;
    const listening = this.#tail.listen(channel, (payload) => {
      this.#announced = Math.max(this.#announced, Number(payload) || 0);
      this.#kick();
    }, () => this.#kick());
    listening.then((l) => {
      if (this.#closed) l.unlisten().catch(() => {});
      else this.#unlisten = () => l.unlisten();
    }, (err) => (this.lastError = err));
    this.#timer = setInterval(() => this.#kick(), this.#options.pollMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  append(): Promise<CommittedBatch> {
    // Every commit on a shared log runs inside locked(): its locks and its Index share one transaction.
    return Promise.reject(new Error("append on the PostgreSQL log runs inside locked()"));
  }

  async locked<T>(
    keys: readonly string[],
    sharedKeys: readonly string[],
    body: (append: AppendBatch) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) throw new LogClosedError();
    let conn: Awaited<ReturnType<Sql["reserve"]>>;
    try {
      conn = await this.#sql.reserve();
    } catch (err) {
      throw isDatabaseUnreachable(err) ? new StorageUnavailableError("database", err) : err;
    }
    let open = false;
    try {
      await conn`BEGIN`;
      open = true;
      const wanted = [...new Set(keys)].map((k) => ({ k: lockText(k), s: false }));
      for (const k of new Set(sharedKeys)) if (!keys.includes(k)) wanted.push({ k: lockText(k), s: true });
      if (wanted.length) {
        // One sorted order (by lock hash) on every node, so two commits never wait on each other in a cycle.
        await conn`
          SELECT (CASE WHEN q.s THEN (SELECT 1 FROM pg_advisory_xact_lock_shared(q.h))
                       ELSE (SELECT 1 FROM pg_advisory_xact_lock(q.h)) END)
          FROM (SELECT hashtextextended(x.k, 0) AS h, bool_and(x.s) AS s
                FROM json_to_recordset(${JSON.stringify(wanted)}::text::json) AS x(k text, s boolean)
                GROUP BY 1 ORDER BY 1) AS q`;
      }
      // The plan must read what every node has committed under these locks.
      const [head] = await conn`SELECT last FROM wharf_head`;
      await this.#catchUp(Number(head!.last));
      const append: AppendBatch = async (build) => {
        const [row] = await conn`UPDATE wharf_head SET last = last + 1 RETURNING last`;
        const index = Number(row!.last);
        const record: LogRecord = { Index: index, ...build(index) as BatchBody };
        await conn`INSERT INTO wharf_log (idx, line) VALUES (${index}, ${JSON.stringify(record)})`;
        await conn`SELECT pg_notify(${channel}, ${String(index)})`;
        await conn`COMMIT`;
        open = false;
        // Read-your-writes: answer only once this node's view includes the commit.
        await this.#catchUp(index);
        return { index, record };
      };
      return await body(append);
    } catch (err) {
      throw isDatabaseUnreachable(err) ? new StorageUnavailableError("database", err) : err;
    } finally {
      if (open) await conn`ROLLBACK`.catch(() => {});
      conn.release();
    }
  }

  /** waitFor, bounded: a view that cannot catch up (its tail connection lost) makes the request a 503. */
  async #catchUp(index: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        this.waitFor(index),
        new Promise<never>((_, reject) =>
          timer = setTimeout(() => reject(new StorageUnavailableError("database", this.lastError)), catchUpMs)
        ),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The newest Index a notification announced (to report how far this node's view lags). */
  get announcedIndex(): number {
    return Math.max(this.#announced, this.#applied);
  }

  /** Resolves once this node has applied every batch up to `index`. */
  waitFor(index: number): Promise<void> {
    if (this.#applied >= index) return Promise.resolve();
    if (this.#closed) return Promise.reject(new LogClosedError());
    return new Promise((resolve, reject) => {
      this.#waiters.push({ index, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#closed || !this.#follower) return;
    if (this.#pulling) {
      this.#again = true;
      return;
    }
    this.#pulling = this.#pull().finally(() => {
      this.#pulling = undefined;
      if (this.#again) {
        this.#again = false;
        this.#kick();
      }
    });
  }

  async #pull(): Promise<void> {
    try {
      while (!this.#closed) {
        const rows = await this.#tail`
          SELECT idx, line FROM wharf_log WHERE idx > ${this.#applied} ORDER BY idx LIMIT ${pullRows}`;
        for (const row of rows) this.#deliver(Number(row.idx), row.line as string);
        this.lastError = undefined;
        if (rows.length < pullRows) break;
      }
    } catch (err) {
      this.lastError = err;
      // Waiters retry with the next kick (poll timer or notification); a closed log rejects them.
    }
  }

  #deliver(index: number, line: string): void {
    if (index !== this.#applied + 1 && this.#applied !== 0) {
      // Rows below the oldest retained one were deleted by retention: a node that far behind restarts.
      throw new Error(`the log table skips from ${this.#applied} to ${index}`);
    }
    const batch: CommittedBatch = { index, record: JSON.parse(line) as LogRecord };
    this.#applied = index;
    try {
      this.#follower?.(batch);
    } finally {
      this.#followers.notify(batch);
      const due = this.#waiters.filter((w) => w.index <= index);
      if (due.length) {
        this.#waiters = this.#waiters.filter((w) => w.index > index);
        for (const w of due) w.resolve();
      }
    }
  }

  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    return this.#followers.subscribe(listener);
  }

  openCursor(next: number): LogCursor {
    return this.#followers.openCursor(next);
  }

  async *read(from: number): AsyncGenerator<{ index: number; line: string }> {
    let next = Math.max(from, 1);
    const upTo = this.#applied;
    while (next <= upTo) {
      const rows = await this.#sql`
        SELECT idx, line FROM wharf_log WHERE idx >= ${next} AND idx <= ${upTo} ORDER BY idx LIMIT ${pullRows}`;
      if (rows.length === 0) return;
      for (const row of rows) {
        const index = Number(row.idx);
        yield { index, line: row.line as string };
        next = index + 1;
      }
    }
  }

  /** Deletes rows covered by the checkpoint and older than the newest retainIndexes (and every cursor). */
  async applyRetention(checkpointIndex: number): Promise<number> {
    const covered = Math.min(checkpointIndex, this.#applied - this.#options.retainIndexes) + 1;
    const below = Math.min(covered, this.#followers.slowestCursor());
    if (below <= this.#first) return 0;
    const deleted = await this.#sql`DELETE FROM wharf_log WHERE idx < ${below}`;
    this.#first = below;
    return deleted.count;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#pulling;
    for (const w of this.#waiters.splice(0)) w.reject(new LogClosedError());
    await this.#unlisten?.().catch(() => {});
    this.#followers.unsubscribeAll();
  }
}

/**
 * A lock key as PostgreSQL text, which cannot hold NUL (keys may join parts with it, e.g. an OIDC issuer and
 * subject): NUL becomes U+FFFD. Two keys that then coincide share one lock, which only serializes them.
 */
function lockText(key: string): string {
  return key.replaceAll("\u0000", "\uFFFD");
}
