// The connections commits reserve, contained: postgres.js 3.4.9 can leave a queued reserve() pending forever when
// the connection it waits for is closed by the server (porsager/postgres#1195), and a reserved connection whose
// server went away (a PostgreSQL restart) takes later statements into a write on a closed socket that never
// settles (porsager/postgres#1208). Either would hang the request and every commit queued behind its locks.
// So a reservation and each statement are bounded in time (then StorageUnavailableError), and a commit whose
// connection failed discards the whole commit pool (terminating its connections) for a fresh one instead of
// releasing it.

import type { Sql } from "./schema.ts";
import { isDatabaseUnreachable } from "../unavailable.ts";
import { StorageUnavailableError } from "../errors.ts";

export type ReservedSql = Awaited<ReturnType<Sql["reserve"]>>;

/** How long a commit waits for a pooled connection, or for one statement, before it fails as unavailable. */
export const commitStatementMs = 15_000;

class StatementTimeout extends StorageUnavailableError {
  constructor(what: string) {
    super("database", new Error(`${what}: no answer from the database in time`));
  }
}

/** `promise`, or a StatementTimeout after `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = commitStatementMs): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new StatementTimeout(what)), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a commit's connection can no longer be trusted (unreachable server, or a statement that hung). */
export function connectionLost(err: unknown): boolean {
  return err instanceof StatementTimeout || isDatabaseUnreachable(err) ||
    (err instanceof StorageUnavailableError && isDatabaseUnreachable(err.cause));
}

/** A pool of commit connections that is replaced, not reused, once one of its connections failed. */
export class CommitPool {
  #sql: Sql;
  readonly #make: () => Sql;
  /** The pool each reserved connection came from: only a failure on the current pool replaces it. */
  readonly #from = new WeakMap<ReservedSql, Sql>();
  #ended = false;
  /** Reservations waiting for a connection now, and pools replaced after a failure since start (for metrics). */
  readonly stats = { waiting: 0, replaced: 0 };

  constructor(make: () => Sql) {
    this.#make = make;
    this.#sql = make();
  }

  /** Reserves a connection, or throws StorageUnavailableError when none comes in time. */
  async reserve(): Promise<ReservedSql> {
    const reserving = this.#sql.reserve();
    this.stats.waiting++;
    try {
      const conn = await within(reserving, "reserving a connection").finally(() => this.stats.waiting--);
      this.#from.set(conn, this.#sql);
      return conn;
    } catch (err) {
      // A reservation that still arrives after we gave up goes straight back to the pool.
      if (err instanceof StatementTimeout) reserving.then((conn) => conn.release(), () => {});
      throw isDatabaseUnreachable(err) ? new StorageUnavailableError("database", err) : err;
    }
  }

  /**
   * `conn` failed: drops every connection of the pool it came from (their pending statements fail) and starts a
   * fresh pool — unless that pool was replaced already (another batch's failure) or the pool has ended.
   */
  discard(conn: ReservedSql): void {
    const old = this.#from.get(conn);
    if (this.#ended || old !== this.#sql) return;
    this.stats.replaced++;
    this.#sql = this.#make();
    old.end({ timeout: 0 }).catch(() => {});
  }

  end(timeoutSeconds: number): Promise<void> {
    this.#ended = true;
    return this.#sql.end({ timeout: timeoutSeconds });
  }
}
