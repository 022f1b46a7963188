// The shapes the document store speaks: stored documents, writes, plans, events as producers give them.

export type Json = Record<string, unknown>;

export interface StoredDoc<T = Json> {
  id: string;
  /** Starts at 1 on create and grows by one per write: the compare-and-set token. */
  version: number;
  /** Log Index of the commit that wrote this state. */
  index: number;
  doc: T;
}

export interface DocWrite {
  collection: string;
  id: string;
  /** The new full state, or null to delete. */
  doc: Json | null;
  /** Compare-and-set: the version the caller read (0 = must not exist). */
  ifVersion?: number;
}

/** An event as producers give it; Index, Namespace and FilterKeys are filled in. */
export interface EventInput {
  Topic: string;
  Type: string;
  Key: string;
  Namespace?: string;
  FilterKeys?: string[] | null;
  Payload: Record<string, unknown>;
}

export interface CommitPlan<R = unknown> {
  writes?: DocWrite[];
  events?: EventInput[];
  /** Extra members kept in the log line for recovery only (never streamed). */
  recovery?: Json;
  result?: R;
}

/** A plan, or a function of the Index the commit will get (for CreateIndex/ModifyIndex fields). */
export type PlanResult<R> = CommitPlan<R> | ((index: number) => CommitPlan<R>);

export class VersionConflictError extends Error {
  readonly collection: string;
  readonly id: string;
  readonly expected: number;
  readonly current: number;
  constructor(collection: string, id: string, expected: number, current: number) {
    super(`version ${expected} of ${collection}/${id} is stale: current is ${current}`);
    this.name = "VersionConflictError";
    this.collection = collection;
    this.id = id;
    this.expected = expected;
    this.current = current;
  }
}

export interface DocChange {
  collection: string;
  id: string;
  current: StoredDoc | undefined;
  previous: StoredDoc | undefined;
  index: number;
}
