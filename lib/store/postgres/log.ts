// The PostgreSQL log table as the commit point shared by every node: commits allocate their Indexes under the
// wharf_head row lock inside one transaction per group of commits (group_commit.ts: indexes commit in order,
// without gaps), and every node tails the table to keep its in-memory view: a NOTIFY carries the committed lines
// (applied at once when the view is right behind them, as are the rows this node committed itself), and
// SELECT … WHERE idx > n reads whatever a notification did not carry or a node missed (a poll covers lost ones).

import type { AppendBatch, CommitLog } from "../commit_log.ts";
import type { CommittedBatch, LogCursor, LogRecord } from "../commit_log.ts";
import { LogClosedError } from "../commit_log.ts";
import { LogFollowers } from "../log_followers.ts";
import type { Sql } from "./schema.ts";
import { retentionFloor } from "./retention.ts";
import { StorageUnavailableError } from "../errors.ts";
import { GroupCommitter } from "./group_commit.ts";
import { CommitPool, within } from "./reserve.ts";
import { ViewSync } from "./view_sync.ts";

const channel = "wharf_log";
const pullRows = 1000;
/** How long one read of the table may take before the tail gives up on its connection. */
const pullMs = 10_000;
/** How long a read of the head (a request catching up with other nodes, view_sync.ts) may take. */
const headMs = 2_000;
/** How long a commit waits for this node's view to catch up before it fails as unavailable. */
const catchUpMs = 10_000;

export interface PgLogOptions {
  retainIndexes: number;
  /** The embedded log's other limits (EventLogOptions): rows kept by size, and how much a slow reader pins. */
  retainBytes?: number;
  pinBytes?: number;
  /** The lowest Index a reader on any live node still needs (cluster.ts); this node's alone when absent. */
  clusterSlowestReader?: () => Promise<number>;
  /** Poll this often even without a notification (a lost LISTEN connection must not stall a node). */
  pollMs: number;
  /** Opens the pool commits reserve their connections from (replaced whole after a connection failed). */
  commitPool: () => Sql;
  /** Opens the connection the tail reads the table with (replaced after a failed read, see #pull). */
  readerPool?: () => Sql;
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
  readonly #committer: GroupCommitter;
  /** Where #pull reads the table: its own connection, replaced after a failed or hung read. */
  #reader: Sql;
  /** Where requests read the head (view_sync.ts): opened on first use, replaced after a failed read. */
  #headReader: Sql | undefined;
  /** Committed lines (this node's own, or carried by a notification) the view has not applied yet, by Index. */
  readonly #own = new Map<number, string>();
  /** When the last pull failed (the database unreachable), for /health. */
  lastError: unknown;
  readonly #viewSync = new ViewSync({
    readHead: () => this.#readHead(),
    applied: () => this.#applied,
    waitFor: (index) => this.waitFor(index),
  });

  private constructor(sql: Sql, tail: Sql, options: PgLogOptions) {
    this.#sql = sql;
    this.#tail = tail;
    this.#options = options;
    this.#reader = options.readerPool?.() ?? tail;
    this.#committer = new GroupCommitter(sql, new CommitPool(options.commitPool), {
      channel,
      catchUp: (index) => this.#catchUp(index),
      committed: (rows) => this.#committedHere(rows),
    });
  }

  /** Batches and commits this node's group commit has made (how well commits are grouped). */
  get commitStats(): { batches: number; members: number } {
    return { ...this.#committer.stats };
  }

  /** Commit reservations waiting for a pooled connection, and commit pools replaced after a failure. */
  get poolStats(): { waiting: number; replaced: number } {
    return this.#committer.poolStats;
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
    const listening = this.#tail.listen(
      channel,
      (payload) => this.#announcement(payload),
      () => this.#kick(),
    );
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

  locked<T>(
    keys: readonly string[],
    sharedKeys: readonly string[],
    body: (append: AppendBatch) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new LogClosedError());
    return this.#committer.run(keys, sharedKeys, body);
  }

  /**
   * A notification: "last" (an Index), or "first:last" and the committed lines (group_commit.ts notifications),
   * applied at once when the view is right behind them; otherwise the tail reads the table.
   */
  #announcement(payload: string): void {
    const newline = payload.indexOf("\n");
    const [first, last] = (newline < 0 ? payload : payload.slice(0, newline)).split(":").map(Number);
    this.#announced = Math.max(this.#announced, (last ?? first) || 0);
    // This node's own commits (applied from memory already) come back as notifications too.
    if (((last ?? first) || 0) <= this.#applied && !this.#own.size) return;
    if (newline >= 0 && first && last && !this.#closed) {
      const lines = payload.slice(newline + 1).split("\n");
      if (lines.length === last - first + 1) {
        lines.forEach((line, i) => {
          if (first + i > this.#applied) this.#own.set(first + i, line);
        });
        try {
          this.#applyOwn();
        } catch (err) {
          this.lastError = err;
        }
      }
    }
    if (this.#applied < this.#announced || this.#own.size) this.#kick();
  }

  /** The rows a COMMIT of this node just made durable: applied at once when the view is right behind them. */
  #committedHere(rows: ReadonlyArray<{ index: number; line: string }>): void {
    for (const r of rows) if (r.index > this.#applied) this.#own.set(r.index, r.line);
    this.#announced = Math.max(this.#announced, rows.at(-1)?.index ?? 0);
    if (!this.#follower || this.#closed) return;
    try {
      this.#applyOwn();
    } catch (err) {
      this.lastError = err;
    }
    if (this.#own.size) this.#kick();
  }

  #applyOwn(): void {
    for (
      let line = this.#own.get(this.#applied + 1);
      line !== undefined;
      line = this.#own.get(this.#applied + 1)
    ) {
      this.#own.delete(this.#applied + 1);
      this.#deliver(this.#applied + 1, line);
    }
  }

  /** waitFor, bounded: a view that cannot catch up (its tail connection lost) fails as unavailable. */
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

  /** Catches this node's view up with every batch committed before the call (view_sync.ts). */
  sync(): Promise<void> {
    return this.#closed ? Promise.resolve() : this.#viewSync.sync();
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
        // Bounded: after a database restart a read on an old connection can fail or hang for good (reserve.ts).
        const rows = await within(
          this.#reader`
          SELECT idx, line FROM wharf_log WHERE idx > ${this.#applied} ORDER BY idx LIMIT ${pullRows}`,
          "reading the log",
          pullMs,
        );
        for (const row of rows) this.#deliver(Number(row.idx), row.line as string);
        for (const index of this.#own.keys()) if (index <= this.#applied) this.#own.delete(index);
        this.#applyOwn();
        this.lastError = undefined;
        if (rows.length < pullRows) break;
      }
    } catch (err) {
      this.lastError = err;
      this.#replaceReader();
      // Waiters retry with the next kick (poll timer or notification); a closed log rejects them.
    }
  }

  /**
   * The newest committed Index, read on a connection of its own (never queued behind, nor cutting off, a long
   * read of the tail's), replaced when the read fails.
   */
  async #readHead(): Promise<number> {
    const reader = this.#headReader ??= this.#options.readerPool?.() ?? this.#sql;
    try {
      const [head] = await within(reader`SELECT last FROM wharf_head`, "reading the head", headMs);
      return Number(head!.last);
    } catch (err) {
      if (reader !== this.#sql && this.#headReader === reader) {
        this.#headReader = undefined;
        reader.end({ timeout: 0 }).catch(() => {});
      }
      throw err;
    }
  }

  /** The next read gets a fresh connection, so one broken by a restart cannot keep this node's view stale. */
  #replaceReader(): void {
    if (!this.#options.readerPool || this.#closed) return;
    const old = this.#reader;
    this.#reader = this.#options.readerPool();
    old.end({ timeout: 0 }).catch(() => {});
  }

  #deliver(index: number, line: string): void {
    // Applied already from memory (this node's own commit) while this read was under way.
    if (index <= this.#applied) return;
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

  /** The lowest Index a stream reader on this node still needs (Infinity when none), for its heartbeat. */
  slowestReader(): number {
    return this.#followers.slowestCursor();
  }

  /**
   * Deletes rows covered by the checkpoint and beyond the limits, keeping what readers on every live node need
   * (up to pinBytes: retention.ts). Run by the checkpoint writer only; returns how many rows went.
   */
  async applyRetention(checkpointIndex: number): Promise<number> {
    const elsewhere = await (this.#options.clusterSlowestReader?.() ?? Infinity);
    const below = await retentionFloor(this.#sql, {
      retainIndexes: this.#options.retainIndexes,
      retainBytes: this.#options.retainBytes ?? Infinity,
      pinBytes: this.#options.pinBytes ?? Infinity,
      checkpointIndex,
      lastIndex: this.#applied,
      slowestReader: Math.min(elsewhere, this.#followers.slowestCursor()),
    });
    if (below <= this.#first) return 0;
    const deleted = await this.#sql`DELETE FROM wharf_log WHERE idx < ${below}`;
    this.#first = below;
    return deleted.count;
  }

  /** Learns the oldest row left (another node's retention deletes rows this node does not see go). */
  async refreshFirstIndex(): Promise<void> {
    const [row] = await this.#sql`SELECT min(idx) AS first FROM wharf_log`;
    this.#first = row?.first === null || row?.first === undefined ? this.#applied + 1 : Number(row.first);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#committer.close();
    clearInterval(this.#timer);
    await this.#pulling;
    for (const w of this.#waiters.splice(0)) w.reject(new LogClosedError());
    await this.#unlisten?.().catch(() => {});
    if (this.#reader !== this.#tail) await this.#reader.end({ timeout: 2 }).catch(() => {});
    if (this.#headReader && this.#headReader !== this.#sql) {
      await this.#headReader.end({ timeout: 2 }).catch(() => {});
    }
    this.#followers.unsubscribeAll();
  }
}
