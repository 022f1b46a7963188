// Who follows a commit log, on either backend (file/eventlog.ts, postgres/log.ts): subscribers told of every durable
// batch in index order, and readers' cursors that retention keeps the log for.

import type { CommittedBatch, LogCursor } from "./commit_log.ts";

export class LogFollowers {
  readonly #subscribers = new Set<(batch: CommittedBatch) => void>();
  readonly #cursors = new Set<{ next: number }>();

  /** Calls `listener` with every batch after it becomes durable, in index order; returns unsubscribe. */
  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }

  /** Tells every subscriber of `batch`. */
  notify(batch: CommittedBatch): void {
    for (const s of this.#subscribers) {
      try {
        s(batch);
      } catch {
        // A faulty subscriber must not affect the log (its writer or view) or other subscribers.
      }
    }
  }

  unsubscribeAll(): void {
    this.#subscribers.clear();
  }

  /** Registers a reader position that retention respects. */
  openCursor(next: number): LogCursor {
    const holder = { next };
    this.#cursors.add(holder);
    const cursors = this.#cursors;
    return {
      get next() {
        return holder.next;
      },
      set next(v: number) {
        holder.next = v;
      },
      release: () => cursors.delete(holder),
    };
  }

  /** The lowest index an open cursor still reads (Infinity when none is open). */
  slowestCursor(): number {
    let slowest = Infinity;
    for (const c of this.#cursors) slowest = Math.min(slowest, c.next);
    return slowest;
  }
}
