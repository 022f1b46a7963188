// A small shared pool of digest Worker threads for blob ingest: at most `maxWorkers` isolates (a V8 isolate
// each), started on demand, each hashing several uploads at once (states keyed by upload id), stopped after
// idling and at close. Without it every large upload started an isolate of its own, unbounded.

import type { HashReply, HashRequest } from "./hash_worker.ts";

export interface HashPoolOptions {
  /** Worker threads at most; more do not help on a 2-core machine (the main thread receives and writes). */
  maxWorkers?: number;
  /** A worker with no upload for this long is stopped. */
  idleMs?: number;
  /**
   * Batches (1 MiB each) handed to the workers and not yet back, all uploads together, past which an upload
   * with more than one batch out waits (see `saturated`): many concurrent uploads then hold a few MiB each
   * instead of a full per-upload window. Default 16 per worker, enough to keep every worker busy.
   */
  maxQueuedBatches?: number;
}

/** How the pool answers one upload. */
export interface UploadListener {
  /** A batch hashed and transferred back, for reuse. */
  returned(batch: Uint8Array<ArrayBuffer>): void;
  /** The hex digests, after finish(). */
  digests(digests: Record<string, string>): void;
  /** The worker died; the upload cannot complete. */
  failed(error: Error): void;
}

/** One upload's handle on its worker. */
export interface PooledUpload {
  /** Transfers `batch` to the worker (do not touch it afterwards). */
  update(batch: Uint8Array<ArrayBuffer>): void;
  /** Asks for the digests (answered once through the listener); the upload then leaves the worker. */
  finish(): void;
  /** Drops the upload's state in the worker and stops its answers; idempotent, a no-op once finished. */
  release(): void;
}

let liveWorkers = 0;

/** Pool workers alive in this process, all pools together (for tests and diagnostics). */
export function livePoolWorkers(): number {
  return liveWorkers;
}

interface PoolWorker {
  worker: Worker;
  /** Uploads on this worker with their batches not yet returned. */
  uploads: Map<number, { listener: UploadListener; queued: number }>;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

export class HashPool {
  readonly maxWorkers: number;
  readonly idleMs: number;
  readonly maxQueuedBatches: number;
  #workers: PoolWorker[] = [];
  #queued = 0;
  #started = 0;
  #nextId = 1;
  #closed = false;

  constructor(options: HashPoolOptions = {}) {
    this.maxWorkers = Math.max(1, options.maxWorkers ?? 2);
    this.idleMs = options.idleMs ?? 30_000;
    this.maxQueuedBatches = Math.max(1, options.maxQueuedBatches ?? 16 * this.maxWorkers);
  }

  /** Workers of this pool alive now. */
  get workerCount(): number {
    return this.#workers.length;
  }

  /** Workers this pool has started so far (a reused worker counts once). */
  get workersStarted(): number {
    return this.#started;
  }

  /** Batches handed to this pool's workers and not yet returned, all uploads together. */
  get queuedBatches(): number {
    return this.#queued;
  }

  /** More batches are out than maxQueuedBatches: uploads with more than one out should wait for theirs. */
  get saturated(): boolean {
    return this.#queued > this.maxQueuedBatches;
  }

  /** Starts hashing an upload's `names` digests on the least busy worker (a new one while under the cap). */
  open(names: readonly string[], listener: UploadListener): PooledUpload {
    if (this.#closed) throw new Error("the blob hash pool is closed");
    const id = this.#nextId++;
    const entry = this.#pick();
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    const upload = { listener, queued: 0 };
    entry.uploads.set(id, upload);
    const post = (message: HashRequest, transfer: Transferable[] = []) => {
      // A worker that failed or was closed is gone: its uploads have been told through `failed`.
      if (entry.uploads.has(id)) entry.worker.postMessage(message, transfer);
    };
    post({ id, names: [...names] });
    return {
      update: (batch) => {
        if (!entry.uploads.has(id)) return;
        upload.queued++;
        this.#queued++;
        post({ id, batch }, [batch.buffer]);
      },
      finish: () => post({ id, finish: true }),
      release: () => {
        if (!entry.uploads.has(id)) return;
        post({ id, abort: true });
        this.#leave(entry, id);
      },
    };
  }

  /** Stops every worker now; uploads still hashing fail. Later opens throw. */
  close(): void {
    this.#closed = true;
    for (const entry of [...this.#workers]) this.#stop(entry, new Error("the blob store was closed"));
  }

  #pick(): PoolWorker {
    let best: PoolWorker | undefined;
    for (const entry of this.#workers) {
      if (!best || entry.uploads.size < best.uploads.size) best = entry;
    }
    if (best && (best.uploads.size === 0 || this.#workers.length >= this.maxWorkers)) return best;
    return this.#start();
  }

  #start(): PoolWorker {
    const worker = new Worker(new URL("./hash_worker.ts", import.meta.url).href, { type: "module" });
    const entry: PoolWorker = { worker, uploads: new Map(), idleTimer: undefined };
    worker.onmessage = (event: MessageEvent<HashReply>) => {
      const reply = event.data;
      // Answers for a released upload (batches sent before its abort) are dropped.
      const upload = entry.uploads.get(reply.id);
      if (!upload) return;
      if ("batch" in reply) {
        upload.queued--;
        this.#queued--;
        upload.listener.returned(reply.batch);
      } else {
        this.#leave(entry, reply.id);
        upload.listener.digests(reply.digests);
      }
    };
    const fail = (message: string) => this.#stop(entry, new Error(`digest worker failed: ${message}`));
    worker.onerror = (event) => {
      event.preventDefault();
      fail(event.message);
    };
    worker.onmessageerror = () => fail("a message could not be read");
    this.#workers.push(entry);
    this.#started++;
    liveWorkers++;
    return entry;
  }

  /** Forgets an upload; a worker left with none is stopped after idleMs. */
  #leave(entry: PoolWorker, id: number): void {
    // Batches of a released upload still in the worker are no longer counted: they are bounded (the
    // upload's window) and the upload holds no buffers any more.
    this.#queued -= entry.uploads.get(id)?.queued ?? 0;
    entry.uploads.delete(id);
    if (entry.uploads.size > 0 || !this.#workers.includes(entry)) return;
    clearTimeout(entry.idleTimer);
    const timer = setTimeout(() => {
      if (entry.uploads.size === 0) this.#stop(entry);
    }, this.idleMs);
    // The timer alone must not keep a process alive (close() ends the workers themselves).
    Deno.unrefTimer(timer);
    entry.idleTimer = timer;
  }

  #stop(entry: PoolWorker, error?: Error): void {
    const index = this.#workers.indexOf(entry);
    if (index < 0) return;
    this.#workers.splice(index, 1);
    liveWorkers--;
    clearTimeout(entry.idleTimer);
    entry.worker.terminate();
    const uploads = [...entry.uploads.values()];
    entry.uploads.clear();
    for (const upload of uploads) {
      this.#queued -= upload.queued;
      upload.listener.failed(error ?? new Error("digest worker stopped"));
    }
  }
}
