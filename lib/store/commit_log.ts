// The commit log as the document store and the event stream see it, with the batches it carries and the
// retention limits: the embedded NDJSON log (file/eventlog.ts) and the PostgreSQL log table (postgres/log.ts)
// both implement it.

/** A reader's position; retention keeps segments at or after the slowest cursor (up to pinBytes). */
export interface LogCursor {
  next: number;
  release(): void;
}

/** A stream-visible event, keys in the order the event stream emits them. */
export interface StreamEvent {
  Topic: string;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  Payload: Record<string, unknown>;
}

/** What a line holds besides its Index: the events plus members only recovery reads. */
export interface BatchBody {
  Events: StreamEvent[];
  [member: string]: unknown;
}

export interface LogRecord extends BatchBody {
  Index: number;
}

export interface CommittedBatch {
  index: number;
  record: LogRecord;
}

export interface EventLogOptions {
  segmentBytes: number;
  segmentIndexes: number;
  retainIndexes: number;
  retainBytes: number;
  /** Bytes of old segments kept beyond the limits while a reader still needs them. */
  pinBytes: number;
}

export const defaultLogOptions: EventLogOptions = {
  segmentBytes: 64 * 1024 * 1024,
  segmentIndexes: 10_000,
  retainIndexes: 100_000,
  retainBytes: 1024 * 1024 * 1024,
  pinBytes: 1024 * 1024 * 1024,
};

export class LogClosedError extends Error {
  constructor(message = "the event log is closed") {
    super(message);
    this.name = "LogClosedError";
  }
}

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
  /**
   * Present on a shared log: resolves once this node's view includes every batch committed on any node before
   * the call, or once it is clear the database cannot say (then the view is used as it is); never rejects.
   */
  sync?(): Promise<void>;
}
