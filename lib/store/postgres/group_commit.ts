// Group commit on the PostgreSQL log: the commits waiting on this node whose keys do not conflict share one
// transaction — the union of their advisory locks, one catch-up of the view, each plan on that view, k indexes
// from one head-row update, one multi-row INSERT, one NOTIFY, one COMMIT (one WAL flush, one head-lock hold).
//
// Why the invariants hold:
// - Per-key exclusion: a batch holds every member's locks (exclusive or shared, in one hash-sorted statement as
//   before) from before its plans run until COMMIT; two members that conflict (exclusive against exclusive or
//   shared on one key) never share a batch, and wait while a batch in flight holds the key (the advisory locks
//   would keep them apart anyway, across this node's connections too; waiting here keeps a blocked member from
//   holding up a whole batch). Plans read the view after it caught up to the head read under those locks, so
//   it includes every earlier commit under their keys, from any node.
// - Gapless indexes in commit order: the head row is locked (SELECT … FOR UPDATE) before any index is handed
//   out and held to COMMIT; members are built one after another with consecutive indexes (a member whose build
//   throws takes none), and the head is set to the last one in the statement that inserts the rows.
// - Failure: a plan or build that throws (e.g. a conflict) leaves the batch alone. A database error fails every
//   member that asked to append with StorageUnavailableError; the rows commit together or not at all. A COMMIT
//   whose answer was lost (the connection cut) is resolved: once the head row lock can be taken (so the old
//   transaction has ended) the rows carrying this batch's random id are looked up — all there: acknowledged;
//   none: unavailable.
// - Read-your-writes: members are answered once this node's view has applied the batch (rows this node just
//   committed are applied from memory when the view is right behind them, see PgLog). The NOTIFY carries the
//   lines too (notifications()), so other nodes apply the batch without reading it back.
// - Stream identical everywhere: every node applies exactly the committed text of each row, in Index order.
//
// Batching: a batch forms on the next event-loop turn after an arrival or after a batch ends (the members a batch
// answered come back through several promise hops and gather into the next one), up to maxBatches in flight.

import type { AppendBatch } from "../commit_log.ts";
import type { BatchBody, CommittedBatch, LogRecord } from "../commit_log.ts";
import { LogClosedError } from "../commit_log.ts";
import { StorageUnavailableError } from "../errors.ts";
import type { Sql } from "./schema.ts";
import { type CommitPool, connectionLost, type ReservedSql as Conn, within } from "./reserve.ts";

/** Batches of one node in flight at once: a second one prepares (locks, plans) while the first commits. */
const maxBatches = 2;
/** Members of one batch at most (bounds the INSERT's size). */
const maxMembers = 500;
/** How long a batch waits for a plan to ask for its append; a later plan fails as unavailable. */
const planMs = 5_000;
/** How long a batch waits for other nodes' advisory locks before its members fail as unavailable. */
const lockWaitMs = 10_000;
/** How long an ambiguous COMMIT is looked up before it fails as unavailable. */
const resolveMs = 10_000;

export interface CommitterHooks {
  channel: string;
  /** Resolves once this node's view includes `index`; rejects (StorageUnavailableError) when it cannot catch up. */
  catchUp(index: number): Promise<void>;
  /** Rows a COMMIT just made durable, for this node's view to apply without reading them back. */
  committed(rows: ReadonlyArray<{ index: number; line: string }>): void;
}

interface Member {
  exclusive: readonly string[];
  shared: readonly string[];
  body: (append: AppendBatch) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Keys a batch holds (or members that wait hold back): exclusive conflicts with both modes, shared with exclusive. */
class KeyClaims {
  readonly exclusive = new Set<string>();
  readonly shared = new Set<string>();

  conflicts(m: Member): boolean {
    for (const k of m.exclusive) if (this.exclusive.has(k) || this.shared.has(k)) return true;
    for (const k of m.shared) if (this.exclusive.has(k)) return true;
    return false;
  }

  add(m: Member): void {
    for (const k of m.exclusive) this.exclusive.add(k);
    for (const k of m.shared) this.shared.add(k);
  }

  get size(): number {
    return this.exclusive.size + this.shared.size;
  }
}

/** One member inside a running batch: its build once it asks to append, and how to answer that append. */
interface Slot {
  member: Member;
  build?: (index: number) => BatchBody;
  answer?: { resolve(batch: CommittedBatch): void; reject(err: unknown): void };
  /** Set once the batch stops accepting appends. */
  closed: boolean;
  /** Settles when the member asked to append or its body ended. */
  ready: Promise<void>;
}

/** What a database error means for the members: StorageUnavailableError (a closed log stays a closed log). */
function unavailable(err: unknown): Error {
  if (err instanceof StorageUnavailableError || err instanceof LogClosedError) return err;
  return new StorageUnavailableError("database", err);
}

/**
 * A lock key as PostgreSQL text: keys may hold U+0000 (e.g. an OIDC issuer and subject joined by it), which no
 * PostgreSQL text or json value can carry. Escaped injectively (backslash first), the same on every node.
 */
export function lockText(key: string): string {
  return key.replaceAll("\\", "\\\\").replaceAll("\u0000", "\\0");
}

export class GroupCommitter {
  readonly #sql: Sql;
  /** Where batches reserve their connections (reserve.ts: bounded, replaced whole after a lost connection). */
  readonly #pool: CommitPool;
  readonly #hooks: CommitterHooks;
  #queue: Member[] = [];
  readonly #running = new Set<KeyClaims>();
  #closed = false;
  /** A macrotask without the timers' clamp (setTimeout(0) waits ~2 ms here, MessageChannel ~0.1 ms). */
  readonly #turn = new MessageChannel();
  #scheduled = false;
  /** Batches committed and members in them (for tests and the benchmark). */
  readonly stats = { batches: 0, members: 0 };

  /** The commit pool's waiting reservations and replacements (for metrics). */
  get poolStats(): { waiting: number; replaced: number } {
    return { ...this.#pool.stats };
  }

  constructor(sql: Sql, pool: CommitPool, hooks: CommitterHooks) {
    this.#sql = sql;
    this.#pool = pool;
    this.#hooks = hooks;
    this.#turn.port1.onmessage = () => {
      this.#scheduled = false;
      refPort(this.#turn.port1, false);
      this.#schedule();
    };
    refPort(this.#turn.port1, false);
  }

  /** Runs `body` in the next batch that can take it; `append` inside it commits with that batch. */
  run<T>(
    keys: readonly string[],
    sharedKeys: readonly string[],
    body: (append: AppendBatch) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new LogClosedError());
    const exclusive = [...new Set(keys)];
    const shared = [...new Set(sharedKeys)].filter((k) => !exclusive.includes(k));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ exclusive, shared, body, resolve: resolve as (v: unknown) => void, reject });
      this.#scheduleSoon();
    });
  }

  /** Answers every member still waiting for a batch; batches in flight finish; then the pool ends. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#turn.port1.close();
    this.#turn.port2.close();
    for (const m of this.#queue.splice(0)) m.reject(new LogClosedError());
    await this.#pool.end(2).catch(() => {});
  }

  /**
   * Forms batches on the next turn of the event loop, not at the first arrival: the members a batch just
   * answered come back through several promise hops, and they should gather into one batch, not the first alone.
   */
  #scheduleSoon(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    refPort(this.#turn.port1, true);
    this.#turn.port2.postMessage(0);
  }

  #schedule(): void {
    while (this.#queue.length && this.#running.size < maxBatches && !this.#closed) {
      const claims = new KeyClaims();
      const held = new KeyClaims(); // keys of members left waiting: later arrivals do not overtake them
      const taken: Member[] = [];
      const rest: Member[] = [];
      for (const m of this.#queue) {
        const free = taken.length < maxMembers && !claims.conflicts(m) && !held.conflicts(m) &&
          ![...this.#running].some((c) => c.conflicts(m));
        if (free) {
          taken.push(m);
          claims.add(m);
        } else {
          rest.push(m);
          held.add(m);
        }
      }
      this.#queue = rest;
      if (taken.length === 0) return;
      this.#running.add(claims);
      this.#runBatch(taken, claims).finally(() => {
        this.#running.delete(claims);
        this.#scheduleSoon();
      });
    }
  }

  async #runBatch(members: Member[], claims: KeyClaims): Promise<void> {
    let conn: Conn;
    try {
      conn = await this.#pool.reserve();
    } catch (err) {
      for (const m of members) m.reject(unavailable(err));
      return;
    }
    let open = true;
    let lost = false;
    // A connection that failed or hung is never reused: the whole commit pool is replaced (reserve.ts).
    const giveBack = async () => {
      if (open && !lost) await within(conn`ROLLBACK`, "ROLLBACK").catch(() => (lost = true));
      open = false;
      if (lost) this.#pool.discard(conn);
      else conn.release();
    };
    let slots: Slot[] = [];
    try {
      await this.#lockAndCatchUp(conn, claims);
    } catch (err) {
      lost = connectionLost(err);
      await giveBack();
      for (const m of members) m.reject(unavailable(err));
      return;
    }
    try {
      slots = await this.#runPlans(members);
      const appended = slots.filter((s) => s.build && s.answer);
      if (appended.length === 0) return;
      // The head row lock from here to COMMIT orders this batch among every node's commits.
      const [head] = await within(conn`SELECT last FROM wharf_head FOR UPDATE`, "locking the head");
      const rows = buildRows(appended, Number(head!.last));
      if (rows.length === 0) return;
      const outcome = await this.#write(conn, rows);
      open = false;
      lost = outcome.lost;
      await giveBack();
      if (outcome.failure !== undefined) {
        const err = new StorageUnavailableError("database", outcome.failure);
        for (const r of rows) r.slot.answer!.reject(err);
        return;
      }
      this.stats.batches++;
      this.stats.members += rows.length;
      this.#hooks.committed(rows);
      try {
        await this.#hooks.catchUp(rows.at(-1)!.index);
      } catch (err) {
        for (const r of rows) r.slot.answer!.reject(unavailable(err));
        return;
      }
      for (const r of rows) r.slot.answer!.resolve({ index: r.index, record: r.record });
    } catch (err) {
      // Nothing of this batch committed (the COMMIT step answers for itself above).
      lost ||= connectionLost(err);
      for (const s of slots) s.answer?.reject(unavailable(err));
    } finally {
      for (const s of slots) s.closed = true;
      if (open) await giveBack();
    }
  }

  /** BEGIN, the union of the members' locks, then the head read under them: one round trip, pipelined. */
  async #lockAndCatchUp(conn: Conn, claims: KeyClaims): Promise<void> {
    const wanted = [
      ...[...claims.exclusive].map((k) => ({ k: lockText(k), s: false })),
      ...[...claims.shared].map((k) => ({ k: lockText(k), s: true })),
    ];
    // The SELECT runs after the lock statement returned, so its snapshot includes every commit the locks
    // waited for. One sorted order (by lock hash) on every node: two batches never wait on each other in a cycle.
    // Bounded: a statement on a connection the server dropped can stay pending forever (reserve.ts).
    // A lock wait past lockWaitMs is the server's refusal (55P03: unavailable, the connection stays usable), well
    // before within()'s bound, which is kept for a connection that stopped answering.
    const [, , , head] = await within(
      Promise.all([
        conn`BEGIN`,
        conn.unsafe(`SET LOCAL lock_timeout = '${lockWaitMs}ms'`),
        wanted.length
          ? conn`
          SELECT (CASE WHEN q.s THEN (SELECT 1 FROM pg_advisory_xact_lock_shared(q.h))
                       ELSE (SELECT 1 FROM pg_advisory_xact_lock(q.h)) END)
          FROM (SELECT hashtextextended(x.k, 0) AS h, bool_and(x.s) AS s
                FROM json_to_recordset(${JSON.stringify(wanted)}::text::json) AS x(k text, s boolean)
                GROUP BY 1 ORDER BY 1) AS q`
          : undefined,
        conn`SELECT last FROM wharf_head`,
      ]),
      "locking",
    );
    await this.#hooks.catchUp(Number(head![0]!.last));
  }

  /** Starts every member's body; resolves once each asked to append or ended (or planMs passed). */
  async #runPlans(members: Member[]): Promise<Slot[]> {
    const slots = members.map((member) => {
      let markReady!: () => void;
      const slot: Slot = { member, closed: false, ready: new Promise<void>((r) => (markReady = r)) };
      const append: AppendBatch = (build) => {
        if (slot.closed || slot.build) {
          return Promise.reject(
            new StorageUnavailableError("database", new Error("the plan asked to append after its batch")),
          );
        }
        slot.build = build;
        const answered = new Promise<CommittedBatch>((
          resolve,
          reject,
        ) => (slot.answer = { resolve, reject }));
        markReady();
        // A plan that does not await its append (and fails first) must not leave a rejection unhandled.
        answered.catch(() => {});
        return answered;
      };
      let result: Promise<unknown>;
      try {
        result = Promise.resolve(member.body(append));
      } catch (err) {
        result = Promise.reject(err);
      }
      result.then(
        (v) => (member.resolve(v), markReady()),
        (err) => (member.reject(err), markReady()),
      );
      return slot;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(slots.map((s) => s.ready)),
      new Promise<void>((r) => (timer = setTimeout(r, planMs))),
    ]);
    clearTimeout(timer);
    for (const s of slots) s.closed = true;
    return slots;
  }

  /**
   * The head update, the rows and the NOTIFY in one statement, pipelined with COMMIT. `failure` is undefined
   * when the batch committed; `lost` says the connection cannot be reused (cut, or a statement that hung).
   */
  async #write(conn: Conn, rows: Row[]): Promise<{ failure?: unknown; lost: boolean }> {
    const last = rows.at(-1)!.index;
    const batchId = randomBatchId();
    const write = within(
      conn`
      WITH head AS (UPDATE wharf_head SET last = ${last}),
           added AS (INSERT INTO wharf_log (idx, line, batch)
                     SELECT i, l, ${batchId}::bigint
                     FROM unnest(${rows.map((r) => r.index)}::bigint[], ${
        rows.map((r) => r.line)
      }::text[]) AS u(i, l))
      SELECT pg_notify(${this.#hooks.channel}, p)
      FROM unnest(${notifications(rows)}::text[]) WITH ORDINALITY AS n(p, o) ORDER BY o`,
      "appending",
    );
    const commit = within(conn`COMMIT`, "COMMIT");
    const [w, c] = await Promise.allSettled([write, commit]);
    if (w.status === "fulfilled" && c.status === "fulfilled") {
      return c.value.command === "COMMIT"
        ? { lost: false }
        : { failure: new Error(`COMMIT answered ${c.value.command}`), lost: false };
    }
    const lost = [w, c].some((r) => r.status === "rejected" && connectionLost(r.reason));
    const failure = w.status === "rejected" ? w.reason : (c as PromiseRejectedResult).reason;
    // A statement the server refused rolls the transaction back; only a cut connection leaves it open.
    if (!lost) return { failure, lost };
    // A connection that hung may still hold the head row lock: close it first, so the lookup can take that lock.
    this.#pool.discard(conn);
    const found = await this.#lookUp(rows[0]!.index, last, batchId);
    return found === true ? { lost } : { failure, lost };
  }

  /**
   * Whether the batch with `batchId` committed, once its transaction is over for sure: the head row lock it
   * held from SELECT … FOR UPDATE is taken (shared) first. Undefined when the database cannot tell in time.
   */
  async #lookUp(first: number, last: number, batchId: string): Promise<boolean | undefined> {
    const deadline = Date.now() + resolveMs;
    while (true) {
      try {
        const count = await within(
          this.#sql.begin(async (tx) => {
            await tx`SET LOCAL lock_timeout = '5s'`;
            await tx`SELECT 1 FROM wharf_head FOR SHARE`;
            const [row] = await tx`
            SELECT count(*)::int AS n FROM wharf_log
            WHERE idx BETWEEN ${first} AND ${last} AND batch = ${batchId}::bigint`;
            return Number(row!.n);
          }),
          "looking the batch up",
        );
        if (count === last - first + 1) return true;
        if (count === 0) return false;
        return undefined;
      } catch {
        if (Date.now() > deadline || this.#closed) return undefined;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

interface Row {
  slot: Slot;
  index: number;
  record: LogRecord;
  line: string;
}

/** Builds the members in order with consecutive indexes after `head`; a member whose build throws takes none. */
function buildRows(appended: Slot[], head: number): Row[] {
  const rows: Row[] = [];
  let index = head;
  for (const slot of appended) {
    let record: LogRecord;
    let line: string;
    try {
      record = { Index: index + 1, ...slot.build!(index + 1) };
      line = JSON.stringify(record);
    } catch (err) {
      // A build that throws, or a record that cannot be serialized, leaves this member alone (no gap).
      slot.answer!.reject(err);
      continue;
    }
    index++;
    rows.push({ slot, index, record, line });
  }
  return rows;
}

/** A NOTIFY payload's limit is 8000 bytes. */
const payloadBytes = 7900;
const encoder = new TextEncoder();

/**
 * The NOTIFY payloads announcing `rows`: "first:last\n" and their lines (JSON text has no raw newline), so other
 * nodes apply them without reading them back; a line too long for a payload is announced by its Index alone.
 * PostgreSQL delivers one transaction's notifications in the order sent.
 */
export function notifications(rows: ReadonlyArray<{ index: number; line: string }>): string[] {
  const out: string[] = [];
  let group: Array<{ index: number; line: string }> = [];
  let bytes = 0;
  const flush = () => {
    if (group.length) {
      out.push(`${group[0]!.index}:${group.at(-1)!.index}\n${group.map((r) => r.line).join("\n")}`);
    }
    group = [];
    bytes = 0;
  };
  for (const row of rows) {
    const size = row.line.length * 3 < payloadBytes / 2
      ? row.line.length * 3
      : encoder.encode(row.line).length;
    if (size + 48 > payloadBytes) {
      flush();
      out.push(String(row.index));
      continue;
    }
    if (bytes + size + 48 > payloadBytes) flush();
    group.push(row);
    bytes += size + 1;
  }
  flush();
  return out;
}

/** Keeps the process alive while a turn is pending, not while the committer idles (Deno's MessagePort). */
function refPort(port: MessagePort, on: boolean): void {
  const p = port as MessagePort & { ref?: () => void; unref?: () => void };
  if (on) p.ref?.();
  else p.unref?.();
}

/** A random signed 63-bit id, as text for PostgreSQL's bigint. */
function randomBatchId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  bytes[0]! &= 0x7f;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n.toString();
}
