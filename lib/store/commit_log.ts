// The commit log as the document store and the event stream see it: the embedded NDJSON log
// (eventlog.ts) and the PostgreSQL log table (postgres/log.ts) both implement it.

import type { BatchBody, CommittedBatch, LogCursor } from "./eventlog.ts";

/** Appends one batch: `build` gets the batch's Index; `apply` runs in index order once it is durable. */
export type AppendBatch = (
  build: (index: number) => BatchBody,
  apply?: (batch: CommittedBatch) => void,
) => Promise<CommittedBatch>;

export interface CommitLog {
  /** Index of the newest batch this node has applied (0 when none). */
  readonly lastIndex: number;
  /** Index of the oldest retained batch, or lastIndex + 1 when none is held. */
  readonly firstIndex: number;
  append: AppendBatch;
  /** Calls `listener` with every batch once this node has it, in index order; returns unsubscribe. */
  subscribe(listener: (batch: CommittedBatch) => void): () => void;
  /** A reader position that retention respects. */
  openCursor(next: number): LogCursor;
  /** The batches with Index >= `from` up to lastIndex, in order, as JSON text and Index. */
  read(from: number, chunkBytes?: number): AsyncGenerator<{ index: number; line: string }>;
  applyRetention(checkpointIndex: number): Promise<number>;
  close(): Promise<void>;
  /**
   * Present on a log shared by many nodes: runs `body` holding cluster-wide locks on `keys` (exclusive) and
   * `sharedKeys`, with this node's view caught up to the newest commit; `append` inside it commits in the same
   * transaction. Batches reach the view through `follow`, never through append's `apply`.
   */
  locked?<T>(
    keys: readonly string[],
    sharedKeys: readonly string[],
    body: (append: AppendBatch) => Promise<T>,
  ): Promise<T>;
  /** Present on a shared log: `apply` receives every batch (this node's and others') in index order. */
  follow?(apply: (batch: CommittedBatch) => void): void;
}
