// JSON documents in collections: held in memory for reads, committed through the commit log, and checkpointed
// through DocSnapshots (snapshots.ts): the data directory's files (file/snapshots.ts) or the PostgreSQL
// documents table (postgres/snapshots.ts).

import { type BatchBody, type CommittedBatch, type StreamEvent } from "./commit_log.ts";
import type { AppendBatch, CommitLog } from "./commit_log.ts";
import type { DocSnapshots } from "./snapshots.ts";
import type { CommitPlan, DocChange, EventInput, Json, PlanResult, StoredDoc } from "./doc_types.ts";
import { VersionConflictError } from "./doc_types.ts";
import { assertCollection, fileNameForId } from "./doc_names.ts";

export type {
  CommitPlan,
  DocChange,
  DocWrite,
  EventInput,
  Json,
  PlanResult,
  StoredDoc,
} from "./doc_types.ts";
export { VersionConflictError } from "./doc_types.ts";
export { assertCollection, fileNameForId, idForFileName } from "./doc_names.ts";
import { KeyedLocks } from "./locks.ts";
import { FileSnapshots } from "./file/snapshots.ts";

interface LoggedDoc {
  c: string;
  id: string;
  v: number;
  d: Json | null;
}

export class DocumentStore {
  readonly root: string;
  readonly log: CommitLog;
  readonly #snapshots: DocSnapshots;
  #collections = new Map<string, Map<string, StoredDoc>>();
  /** Documents changed since the last checkpoint, with the Index of their latest change. */
  #dirty = new Map<string, { collection: string; id: string; index: number }>();
  #watchers = new Map<string, Set<(change: DocChange) => void>>();
  #locks = new KeyedLocks();
  /** Versions of documents written by commits built but not yet durable (same or earlier fsync group). */
  #inFlight = new Map<string, { version: number; exists: boolean; index: number }>();
  #checkpointIndex = 0;
  #checkpointing: Promise<void> | undefined;
  #commitObserver: ((seconds: number, committed: boolean) => void) | undefined;

  private constructor(root: string, log: CommitLog, snapshots: DocSnapshots) {
    this.root = root;
    this.log = log;
    this.#snapshots = snapshots;
  }

  /**
   * Loads every document from `snapshots`, then replays the log after the index they reflect. Without
   * `snapshots`, they are the data directory's files under `root`, where `packed` names collections checkpointed
   * as packs of many documents (file/packs.ts) rather than a file each.
   */
  static async open(
    root: string,
    log: CommitLog,
    options: { packed?: Iterable<string>; snapshots?: DocSnapshots } = {},
  ) {
    const store = new DocumentStore(root, log, options.snapshots ?? new FileSnapshots(root, options.packed));
    await store.#load();
    await store.#replay();
    // A shared log hands this node every batch (its own and other nodes') through one ordered path.
    log.follow?.((batch) => store.#applyCommitted(batch));
    return store;
  }

  get checkpointIndex(): number {
    return this.#checkpointIndex;
  }

  async #load(): Promise<void> {
    const loaded = await this.#snapshots.load();
    this.#checkpointIndex = loaded.checkpointIndex;
    for (const { collection, stored } of loaded.docs) this.#collection(collection).set(stored.id, stored);
  }

  async #replay(): Promise<void> {
    if (this.#checkpointIndex > this.log.lastIndex) {
      throw new Error(
        `documents are checkpointed at index ${this.#checkpointIndex} but the event log ends at ${this.log.lastIndex}`,
      );
    }
    for await (const { line } of this.log.read(this.#checkpointIndex + 1)) {
      const record = JSON.parse(line) as { Index: number; Docs?: LoggedDoc[] };
      this.#applyDocs(record.Index, record.Docs ?? [], false);
    }
  }

  #collection(name: string): Map<string, StoredDoc> {
    let docs = this.#collections.get(name);
    if (!docs) {
      assertCollection(name);
      docs = new Map();
      this.#collections.set(name, docs);
    }
    return docs;
  }

  get<T = Json>(collection: string, id: string): StoredDoc<T> | undefined {
    return this.#collections.get(collection)?.get(id) as StoredDoc<T> | undefined;
  }

  /** Every document of a collection, in insertion order (no disk access). */
  list<T = Json>(collection: string): IterableIterator<StoredDoc<T>> {
    return (this.#collections.get(collection)?.values() ?? [].values()) as IterableIterator<StoredDoc<T>>;
  }

  /** Names of the collections that hold documents (storage migrate copies them all). */
  collections(): string[] {
    return [...this.#collections].filter(([, docs]) => docs.size > 0).map(([name]) => name);
  }

  count(collection: string): number {
    return this.#collections.get(collection)?.size ?? 0;
  }

  /** Calls `listener` after every committed change to `collection`; returns unsubscribe. */
  watch(collection: string, listener: (change: DocChange) => void): () => void {
    assertCollection(collection);
    let set = this.#watchers.get(collection);
    if (!set) this.#watchers.set(collection, set = new Set());
    set.add(listener);
    return () => set.delete(listener);
  }

  /** How many watch listeners are registered (lets a test prove that a closed module unsubscribed). */
  get watcherCount(): number {
    let n = 0;
    for (const set of this.#watchers.values()) n += set.size;
    return n;
  }

  /**
   * Runs `plan` while holding `locks` (document keys like "registry/boxes/ID" or any uniqueness key),
   * then commits its writes and events as one durable log batch. The plan reads current state with
   * get/list; a thrown error aborts without writing. Resolves after the commit is durable. A plan of no writes
   * and no events commits nothing (no batch, no failure) and resolves with the log's last index.
   * `sharedLocks` are taken in shared mode: commits holding one shared key run together, and a commit holding
   * it exclusively (in `locks`) runs alone (e.g. logins share their auth method's key, its delete excludes them).
   */
  async transact<R = undefined>(
    locks: Iterable<string>,
    plan: () => PlanResult<R> | Promise<PlanResult<R>>,
    options: { sharedLocks?: Iterable<string> } = {},
  ): Promise<{ index: number; result: R }> {
    const observer = this.#commitObserver;
    if (!observer) return await this.#transact(locks, plan, options);
    const started = performance.now();
    let committed = false;
    try {
      const done = await this.#transact(locks, plan, options);
      committed = true;
      return done;
    } finally {
      observer((performance.now() - started) / 1000, committed);
    }
  }

  /** `observer` gets each transact's duration in seconds (lock waits included) and whether it committed. */
  observeCommits(observer: (seconds: number, committed: boolean) => void): void {
    this.#commitObserver = observer;
  }

  async #transact<R>(
    locks: Iterable<string>,
    plan: () => PlanResult<R> | Promise<PlanResult<R>>,
    options: { sharedLocks?: Iterable<string> },
  ): Promise<{ index: number; result: R }> {
    const keys = [...locks];
    const shared = [...options.sharedLocks ?? []];
    const release = await this.#locks.acquire(keys, shared);
    try {
      const log = this.log;
      if (log.locked) {
        return await log.locked(keys, shared, (append) => this.#commitPlan(plan, append, false));
      }
      return await this.#commitPlan(plan, (build, apply) => log.append(build, apply), true);
    } finally {
      release();
    }
  }

  async #commitPlan<R>(
    plan: () => PlanResult<R> | Promise<PlanResult<R>>,
    append: AppendBatch,
    applyOwn: boolean,
  ): Promise<{ index: number; result: R }> {
    const planned = await plan();
    // A plan that decides to write nothing (no writes, no events) commits nothing: no empty batch, not a failure.
    if (typeof planned !== "function" && isEmptyPlan(planned)) {
      return { index: this.log.lastIndex, result: planned.result as R };
    }
    let result: R | undefined;
    let built = 0;
    try {
      const batch = await append(
        (index) => {
          const p = typeof planned === "function" ? planned(index) : planned;
          result = p.result;
          const body = this.#buildBody(index, p);
          built = index;
          return body;
        },
        applyOwn ? (committed) => this.#applyCommitted(committed) : undefined,
      );
      return { index: batch.index, result: result as R };
    } catch (err) {
      // A shared log's transaction can fail after the body was built: its reserved versions never commit.
      if (built && !applyOwn) {
        for (const [key, state] of this.#inFlight) if (state.index === built) this.#inFlight.delete(key);
      }
      throw err;
    }
  }

  #buildBody(index: number, plan: CommitPlan<unknown>): BatchBody {
    const docs: LoggedDoc[] = [];
    const seen = new Map<string, { version: number; exists: boolean }>();
    for (const w of plan.writes ?? []) {
      const key = docKey(w.collection, w.id);
      // The state this write follows: earlier writes of this plan, then commits already built into the
      // current group (durable soon, not yet in memory), then memory.
      const memory = this.#collection(w.collection).get(w.id);
      const before = seen.get(key) ?? this.#inFlight.get(key) ??
        { version: memory?.version ?? 0, exists: memory !== undefined };
      if (w.ifVersion !== undefined && before.version !== w.ifVersion) {
        throw new VersionConflictError(w.collection, w.id, w.ifVersion, before.version);
      }
      if (w.doc !== null) fileNameForId(w.id);
      if (w.doc === null && !before.exists) continue;
      const version = w.doc === null ? 0 : before.version + 1;
      seen.set(key, { version, exists: w.doc !== null });
      docs.push({ c: w.collection, id: w.id, v: version, d: w.doc });
    }
    // Only a plan that passed every check reserves its versions.
    for (const [key, state] of seen) this.#inFlight.set(key, { ...state, index });
    const events = (plan.events ?? []).map((e) => toStreamEvent(e, index));
    return { Events: events, ...(docs.length ? { Docs: docs } : {}), ...(plan.recovery ?? {}) };
  }

  #applyCommitted(batch: CommittedBatch): void {
    this.#applyDocs(batch.index, (batch.record.Docs as LoggedDoc[] | undefined) ?? [], true);
  }

  #applyDocs(index: number, docs: LoggedDoc[], notify: boolean): void {
    for (const d of docs) {
      const coll = this.#collection(d.c);
      const previous = coll.get(d.id);
      let current: StoredDoc | undefined;
      if (d.d === null) coll.delete(d.id);
      else {
        current = { id: d.id, version: d.v, index, doc: d.d };
        coll.set(d.id, current);
      }
      const key = docKey(d.c, d.id);
      this.#dirty.set(key, { collection: d.c, id: d.id, index });
      if (this.#inFlight.get(key)?.index === index) this.#inFlight.delete(key);
      if (!notify) continue;
      for (const w of this.#watchers.get(d.c) ?? []) {
        try {
          w({ collection: d.c, id: d.id, current, previous, index });
        } catch {
          // An index builder's bug must not break the commit path.
        }
      }
    }
  }

  /** Create or replace one document, optionally compare-and-set; returns the stored state. */
  async put(
    collection: string,
    id: string,
    doc: Json,
    options: { ifVersion?: number; events?: EventInput[] } = {},
  ): Promise<StoredDoc> {
    await this.transact([`${collection}/${id}`], () => ({
      writes: [{
        collection,
        id,
        doc,
        ...(options.ifVersion !== undefined ? { ifVersion: options.ifVersion } : {}),
      }],
      events: options.events ?? [],
    }));
    return this.get(collection, id)!;
  }

  /** Delete one document; false when it did not exist. */
  async delete(
    collection: string,
    id: string,
    options: { ifVersion?: number; events?: EventInput[] } = {},
  ): Promise<boolean> {
    const existed = this.get(collection, id) !== undefined;
    await this.transact([`${collection}/${id}`], () => ({
      writes: [{
        collection,
        id,
        doc: null,
        ...(options.ifVersion !== undefined ? { ifVersion: options.ifVersion } : {}),
      }],
      events: options.events ?? [],
    }));
    return existed;
  }

  /** Writes every changed document to the snapshots, which record the index they all reflect. */
  checkpoint(options: { background?: boolean } = {}): Promise<void> {
    if (!this.#checkpointing) {
      this.#checkpointing = this.#writeCheckpoint(options.background ?? false).finally(
        () => (this.#checkpointing = undefined),
      );
    }
    return this.#checkpointing;
  }

  /**
   * Another node wrote the checkpoint up to `index` (a shared documents table): changes at or below it need no
   * write from this node, which forgets them so it holds only what it would write if it became the writer.
   */
  checkpointedElsewhere(index: number): void {
    if (index <= this.#checkpointIndex) return;
    for (const [key, entry] of this.#dirty) if (entry.index <= index) this.#dirty.delete(key);
    this.#checkpointIndex = Math.min(index, this.log.lastIndex);
  }

  async #writeCheckpoint(background: boolean): Promise<void> {
    const upTo = this.log.lastIndex;
    if (this.#dirty.size === 0 && upTo === this.#checkpointIndex) return;
    const batch = [...this.#dirty.entries()];
    this.#dirty.clear();
    try {
      await this.#snapshots.write(
        batch.map(([, e]) => ({ ...e, current: this.#collections.get(e.collection)?.get(e.id) })),
        upTo,
        { live: (collection) => this.list(collection), background },
      );
    } catch (err) {
      for (const [key, value] of batch) if (!this.#dirty.has(key)) this.#dirty.set(key, value);
      throw err;
    }
    this.#checkpointIndex = upTo;
  }
}

function docKey(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

/** Orders an event's keys as the stream emits them and stamps the batch Index. */
export function toStreamEvent(e: EventInput, index: number): StreamEvent {
  return {
    Topic: e.Topic,
    Type: e.Type,
    Key: e.Key,
    Namespace: e.Namespace ?? "",
    FilterKeys: e.FilterKeys ?? null,
    Index: index,
    Payload: e.Payload,
  };
}

/** A plan with no writes, no events and nothing kept for recovery. */
function isEmptyPlan(plan: CommitPlan<unknown>): boolean {
  return !plan.writes?.length && !plan.events?.length && plan.recovery === undefined;
}
