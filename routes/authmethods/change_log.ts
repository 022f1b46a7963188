// The auth family's document changes in commit order, each tagged with a generation (one per change) and its
// commit index: cached listings are patched from the changes after their generation, and list_token refreshes
// read only the documents written after their previous phase's commit index.

export interface Change {
  /** Counts changes; 0 for the entries the log starts with (no cached listing is older than those). */
  generation: number;
  /** The log index of the commit. */
  index: number;
  collection: string;
  id: string;
}

export class ChangeLog {
  /** Ascending by generation and by index alike (commits are applied in index order). */
  #entries: Change[];
  #generation = 0;
  /** Compaction dropped entries of generations up to this one: changes after an older one are unknown. */
  #compactedThrough = 0;
  #lastIndex: number;
  readonly #isLive: (collection: string, id: string) => boolean;
  readonly #liveCount: () => number;

  /**
   * `current`: the live documents with the index of their last write (`lastIndex` is the log's last index);
   * `isLive` and `liveCount` look at the documents as they are now, for compaction.
   */
  constructor(
    current: Iterable<{ index: number; collection: string; id: string }>,
    lastIndex: number,
    isLive: (collection: string, id: string) => boolean,
    liveCount: () => number,
  ) {
    this.#entries = [...current].map((c) => ({ ...c, generation: 0 })).sort((a, b) => a.index - b.index);
    this.#lastIndex = lastIndex;
    this.#isLive = isLive;
    this.#liveCount = liveCount;
  }

  /** The latest change's generation: anything derived from the documents is current while it holds. */
  get generation(): number {
    return this.#generation;
  }

  /** The highest commit index recorded (or the log's last index at start): every later change has a higher one. */
  get lastIndex(): number {
    return this.#lastIndex;
  }

  get size(): number {
    return this.#entries.length;
  }

  /**
   * Records a committed write (or delete). Once superseded entries (older writes of one document, deleted
   * documents) outnumber the live documents, they are dropped, so the log stays proportional to the
   * documents (amortized O(1) per change).
   */
  record(collection: string, id: string, index: number): void {
    this.#entries.push({ generation: ++this.#generation, index, collection, id });
    if (index > this.#lastIndex) this.#lastIndex = index;
    if (this.#entries.length > 2 * this.#liveCount() + 1024) this.#compact();
  }

  /** Changes after generation `since`, newest first; undefined when they are unknown or more than `limit`. */
  changesAfter(since: number, limit: number): Change[] | undefined {
    if (since < this.#compactedThrough) return undefined;
    const out: Change[] = [];
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const c = this.#entries[i]!;
      if (c.generation <= since) break;
      if (out.length === limit) return undefined;
      out.push(c);
    }
    return out;
  }

  /**
   * Distinct ids of `collection` with a write after commit index `afterIndex`, newest first. Exact for any
   * index: compaction keeps every live document's last write. A deleted document may be left out.
   */
  idsWrittenAfter(collection: string, afterIndex: number): string[] {
    const ids = new Set<string>();
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const c = this.#entries[i]!;
      if (c.index <= afterIndex) break;
      if (c.collection === collection) ids.add(c.id);
    }
    return [...ids];
  }

  /** Keeps only the last entry of each live document. */
  #compact(): void {
    const seen = new Set<string>();
    const kept: Change[] = [];
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const c = this.#entries[i]!;
      const key = `${c.collection}\u0000${c.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (this.#isLive(c.collection, c.id)) kept.push(c);
    }
    this.#entries = kept.reverse();
    this.#compactedThrough = this.#generation;
  }
}
