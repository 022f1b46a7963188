// Where documents are checkpointed when that is not the data directory: the PostgreSQL documents table.

import type { StoredDoc } from "./doc_types.ts";

/** One changed document at checkpoint time: its current state, or undefined once deleted. */
export interface SnapshotEntry {
  collection: string;
  id: string;
  current: StoredDoc | undefined;
}

export interface DocSnapshots {
  /** Every live document and the index they all reflect. */
  load(): Promise<{ checkpointIndex: number; docs: Array<{ collection: string; stored: StoredDoc }> }>;
  /** Records `entries` (all changes since the last write) as the state at `upTo`. */
  write(entries: SnapshotEntry[], upTo: number): Promise<void>;
}
