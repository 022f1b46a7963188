// Where documents are checkpointed, behind one interface: the data directory's files (file/snapshots.ts) or the
// PostgreSQL documents table (postgres/snapshots.ts). DocumentStore loads from and writes to it, nothing else.

import type { StoredDoc } from "./doc_types.ts";

/** One changed document at checkpoint time: its current state, or undefined once deleted. */
export interface SnapshotEntry {
  collection: string;
  id: string;
  current: StoredDoc | undefined;
}

/** What a checkpoint may ask of the store beyond the changed documents. */
export interface SnapshotContext {
  /** Every live document of a collection now (a packed collection's compaction rewrites them all). */
  live(collection: string): Iterable<StoredDoc>;
  /** A background checkpoint keeps its I/O light; one at shutdown, when nothing else waits, may use more. */
  background: boolean;
}

export interface DocSnapshots {
  /** Every live document (in the order they were stored) and the index they all reflect. */
  load(): Promise<{ checkpointIndex: number; docs: Iterable<{ collection: string; stored: StoredDoc }> }>;
  /** Records `entries` (all changes since the last write) as the state at `upTo`. */
  write(entries: SnapshotEntry[], upTo: number, context: SnapshotContext): Promise<void>;
}
