// JSON documents in collections: held in memory for reads, committed through the event log, and
// checkpointed to data/<family>/<collection>/<id>.json by atomic replacement (token collections as packs).

import { type BatchBody, type CommittedBatch, type EventLog, type StreamEvent } from "./eventlog.ts";
import { writeChangedDocuments } from "./checkpoint.ts";
import { atomicWrite, ensureDir, removeTempFiles, tempSuffix } from "./fsutil.ts";
import { KeyedLocks } from "./locks.ts";
import { isPackFile, PackFolder } from "./packs.ts";

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

interface LoggedDoc {
  c: string;
  id: string;
  v: number;
  d: Json | null;
}

const collectionPattern = /^(registry|auth|cluster|test)\/[a-z][a-z0-9_-]{0,63}$/;
const plainId = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,149}$/;
const encoder = new TextEncoder();
/**
 * Files written at once by a checkpoint. In the background a few are enough and keep request latency flat (32
 * concurrent fsyncs stalled requests on a 2-core machine: /health p99 23–28 ms against 7–8 ms with 4); at
 * shutdown, when nothing else waits, many overlap their fsyncs to finish sooner.
 */
const backgroundParallelism = 4;
const shutdownParallelism = 32;

/** Maps any id to a safe file name: plain ids as-is, anything else as `~` + hex of its UTF-8. */
export function fileNameForId(id: string): string {
  if (id.length === 0) throw new RangeError("a document id must not be empty");
  if (plainId.test(id) && !id.includes("..") && !id.endsWith(".tmp")) return `${id}.json`;
  const bytes = encoder.encode(id);
  if (bytes.length > 110) throw new RangeError("a document id must be at most 110 bytes when not plain");
  return `~${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}.json`;
}

export function idForFileName(name: string): string | undefined {
  if (!name.endsWith(".json")) return undefined;
  const stem = name.slice(0, -5);
  if (!stem.startsWith("~")) return stem;
  const hex = stem.slice(1);
  if (!/^([0-9a-f]{2})+$/.test(hex)) return undefined;
  return new TextDecoder().decode(new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16))));
}

export function assertCollection(name: string): void {
  if (!collectionPattern.test(name)) throw new RangeError(`invalid collection name ${JSON.stringify(name)}`);
}

export class DocumentStore {
  readonly root: string;
  readonly log: EventLog;
  #collections = new Map<string, Map<string, StoredDoc>>();
  #dirty = new Map<string, { collection: string; id: string }>();
  #watchers = new Map<string, Set<(change: DocChange) => void>>();
  #locks = new KeyedLocks();
  /** Versions of documents written by commits built but not yet durable (same or earlier fsync group). */
  #inFlight = new Map<string, { version: number; exists: boolean; index: number }>();
  #checkpointIndex = 0;
  #checkpointing: Promise<void> | undefined;
  /** Collections checkpointed as packs (lib/store/packs.ts): the configured ones and any found packed. */
  #packed: Set<string>;
  #packs = new Map<string, PackFolder>();

  private constructor(root: string, log: EventLog, packed: Iterable<string>) {
    this.root = root;
    this.log = log;
    this.#packed = new Set(packed);
  }

  /**
   * Loads every document under `root`, then replays log lines after the manifest's checkpoint. `packed`
   * names collections whose checkpoints are packs of many documents (see packs.ts) rather than a file each.
   */
  static async open(root: string, log: EventLog, options: { packed?: Iterable<string> } = {}) {
    const store = new DocumentStore(root, log, options.packed ?? []);
    await store.#load();
    return store;
  }

  get checkpointIndex(): number {
    return this.#checkpointIndex;
  }

  async #load(): Promise<void> {
    await ensureDir(this.root);
    try {
      const manifest = JSON.parse(await Deno.readTextFile(`${this.root}/manifest.json`));
      this.#checkpointIndex = Number(manifest.checkpointIndex) || 0;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new Error(`cannot read ${this.root}/manifest.json: ${err}`);
      }
    }
    await removeTempFiles(this.root);
    for (const family of ["registry", "auth", "cluster", "test"]) {
      const familyDir = `${this.root}/${family}`;
      let entries: Deno.DirEntry[];
      try {
        entries = [...Deno.readDirSync(familyDir)];
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) continue;
        throw err;
      }
      for (const entry of entries) {
        if (!entry.isDirectory) continue;
        const collection = `${family}/${entry.name}`;
        if (!collectionPattern.test(collection)) continue;
        this.#loadCollection(collection, `${familyDir}/${entry.name}`);
      }
    }
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

  #loadCollection(collection: string, dir: string): void {
    const docs = this.#collection(collection);
    // One synchronous pass over the folder: leftover temp files are removed, documents read. Measured faster
    // than parallel async reads for many small files (docs/benchmarks.md).
    const decoder = new TextDecoder();
    const names: string[] = [];
    const perDocFiles: string[] = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile) continue;
      const path = `${dir}/${entry.name}`;
      if (entry.name.endsWith(tempSuffix)) {
        Deno.removeSync(path);
        continue;
      }
      names.push(entry.name);
      if (isPackFile(entry.name)) this.#packed.add(collection);
      if (idForFileName(entry.name) === undefined) continue;
      perDocFiles.push(entry.name);
      let stored: StoredDoc;
      try {
        stored = JSON.parse(decoder.decode(Deno.readFileSync(path)));
      } catch {
        throw new Error(`document ${path} is not valid JSON`);
      }
      docs.set(stored.id, stored);
    }
    if (this.#packed.has(collection)) this.#packFolder(collection).load(names, docs, perDocFiles);
  }

  #packFolder(collection: string): PackFolder {
    let folder = this.#packs.get(collection);
    if (!folder) this.#packs.set(collection, folder = new PackFolder(`${this.root}/${collection}`));
    return folder;
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
   * get/list; a thrown error aborts without writing. Resolves after the commit is durable.
   * `sharedLocks` are taken in shared mode: commits holding one shared key run together, and a commit holding
   * it exclusively (in `locks`) runs alone (e.g. logins share their auth method's key, its delete excludes them).
   */
  async transact<R = undefined>(
    locks: Iterable<string>,
    plan: () => PlanResult<R> | Promise<PlanResult<R>>,
    options: { sharedLocks?: Iterable<string> } = {},
  ): Promise<{ index: number; result: R }> {
    const release = await this.#locks.acquire(locks, options.sharedLocks);
    try {
      const planned = await plan();
      let result: R | undefined;
      const batch = await this.log.append(
        (index) => {
          const p = typeof planned === "function" ? planned(index) : planned;
          result = p.result;
          return this.#buildBody(index, p);
        },
        (committed) => this.#applyCommitted(committed),
      );
      return { index: batch.index, result: result as R };
    } finally {
      release();
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
      this.#dirty.set(key, { collection: d.c, id: d.id });
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

  /** Writes every changed document to disk, then records the index they all reflect. */
  checkpoint(options: { background?: boolean } = {}): Promise<void> {
    if (!this.#checkpointing) {
      const parallelism = options.background ? backgroundParallelism : shutdownParallelism;
      this.#checkpointing = this.#writeCheckpoint(parallelism).finally(
        () => (this.#checkpointing = undefined),
      );
    }
    return this.#checkpointing;
  }

  async #writeCheckpoint(parallelism: number): Promise<void> {
    const upTo = this.log.lastIndex;
    if (this.#dirty.size === 0 && upTo === this.#checkpointIndex) return;
    const batch = [...this.#dirty.entries()];
    this.#dirty.clear();
    try {
      await writeChangedDocuments(batch.map(([, entry]) => entry), {
        root: this.root,
        upTo,
        parallelism,
        current: (collection, id) => this.#collections.get(collection)?.get(id),
        fileName: fileNameForId,
        packFolder: (collection) => this.#packed.has(collection) ? this.#packFolder(collection) : undefined,
        live: (collection) => this.list(collection),
      });
    } catch (err) {
      for (const [key, value] of batch) if (!this.#dirty.has(key)) this.#dirty.set(key, value);
      throw err;
    }
    await atomicWrite(
      `${this.root}/manifest.json`,
      encoder.encode(JSON.stringify({ checkpointIndex: upTo })),
    );
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
