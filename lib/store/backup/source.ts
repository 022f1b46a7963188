// What a backup reads from its source (a data directory or a cluster's database): the checkpointed documents and
// those the log wrote after them, as of one log index, the retained log lines up to it, the usage counters.

import type { StoredDoc } from "../doc_types.ts";
import type { CheckpointedDoc } from "./doc_spool.ts";

export interface LogLine {
  index: number;
  /** The batch's JSON text exactly as the log holds it. */
  line: string;
}

export interface SourceSnapshot {
  /** The index the source's checkpoint reflected when the snapshot was read. */
  checkpointIndex: number;
  /** The oldest retained log index (lastIndex + 1 when none is retained). */
  firstIndex: number;
  /** The snapshot's index: every document is as of this batch. */
  lastIndex: number;
  /** The collections holding checkpointed documents. */
  collections: string[];
  /**
   * A collection's checkpointed documents one at a time (read while the snapshot is open), those `written` names
   * included: a document's state is `written`'s when it names it.
   */
  checkpointed(collection: string): AsyncIterable<CheckpointedDoc>;
  /** collection → id → its state written by the log after the checkpoint, up to lastIndex (null: deleted). */
  written: Map<string, Map<string, StoredDoc | null>>;
  /** counter set name → key → value. */
  counters: Map<string, Record<string, number>>;
}

/** The source moved under the reader (a checkpoint or retention ran): the snapshot is read again. */
export class RetrySnapshot extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RetrySnapshot";
  }
}
