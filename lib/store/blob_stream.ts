// Fast paths for moving large blobs: a body gathered into reusable 1 MiB batches whose digests a pooled
// Worker thread updates while the main thread receives and writes (SHA-256 then runs on the second core),
// and a file stream that reads 1 MiB at a time (measured: serves a 1 GiB file ~1.4x faster than
// file.readable).

import { createHash } from "node:crypto";
import type { HashPool, PooledUpload } from "./hash_pool.ts";

export const batchBytes = 1024 * 1024;
/** A batch owns its (transferable) buffer. */
export type Batch = Uint8Array<ArrayBuffer>;
/**
 * Batches handed to the hash worker and not yet back; bounds memory to about this many MiB per upload (less
 * when the pool is saturated by many uploads: see HashPool.maxQueuedBatches).
 */
const maxBatchesInFlight = 8;

/**
 * Reads a stream into caller-supplied buffers, copying its chunks in. Not BYOB on purpose: BYOB reads of a
 * Deno.serve request body from a slow chunked client came in ~64 KiB pieces, took 5x longer and grew RSS by
 * ~125 MiB per 256 MiB (measured), while one memcpy per byte costs ~0.1 s per GiB.
 */
export class BatchReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #pending: Uint8Array | undefined;
  #ended = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** The next bytes in `buffer` (possibly fewer than it holds), or undefined at the end of the stream. */
  async read(buffer: Batch): Promise<Batch | undefined> {
    if (this.#ended) return undefined;
    let filled = 0;
    while (filled < buffer.length) {
      let chunk = this.#pending;
      this.#pending = undefined;
      if (!chunk) {
        const { value, done } = await this.#reader.read();
        if (done) {
          this.#ended = true;
          break;
        }
        chunk = value;
      }
      const take = Math.min(chunk.length, buffer.length - filled);
      buffer.set(chunk.subarray(0, take), filled);
      filled += take;
      if (take < chunk.length) this.#pending = chunk.subarray(take);
    }
    return filled > 0 ? buffer.subarray(0, filled) : undefined;
  }

  cancel(reason?: unknown): void {
    this.#reader.cancel(reason).catch(() => {});
  }
}

/**
 * Digests of a stream of batches, computed incrementally. A one-batch stream is hashed inline (no thread
 * for small bodies); from the second batch on, every batch goes to a worker of the shared pool, which
 * returns it for reuse. close() (after finish, or on any failure) frees the upload's state in the worker.
 */
export class ParallelDigests {
  readonly #names: readonly string[];
  readonly #pool: HashPool;
  #held: Batch | undefined;
  #upload: PooledUpload | undefined;
  #spare: Batch[] = [];
  #inFlight = 0;
  #closed = false;
  #wake: (() => void) | undefined;
  #failure: Error | undefined;
  #finished: { resolve(digests: Record<string, string>): void; reject(error: Error): void } | undefined;

  constructor(names: readonly string[], pool: HashPool) {
    this.#names = names;
    this.#pool = pool;
  }

  /** A buffer for the next batch: one the worker has finished with, or a new one. */
  buffer(): Batch {
    return this.#spare.pop() ?? new Uint8Array(batchBytes);
  }

  /** Takes ownership of `batch` (do not touch it afterwards); waits while the worker is too far behind. */
  async update(batch: Batch): Promise<void> {
    if (this.#failure) throw this.#failure;
    if (!this.#upload) {
      if (!this.#held) {
        this.#held = batch;
        return;
      }
      this.#upload = this.#pool.open(this.#names, {
        returned: (returned) => {
          this.#inFlight--;
          // Only full-size buffers are worth keeping; the last, short view still owns a whole batch buffer.
          if (!this.#closed) this.#spare.push(new Uint8Array(returned.buffer));
          this.#wakeUp();
        },
        digests: (digests) => this.#finished?.resolve(digests),
        failed: (error) => {
          this.#failure = error;
          this.#wakeUp();
          this.#finished?.reject(error);
        },
      });
      this.#send(this.#held);
      this.#held = undefined;
    }
    this.#send(batch);
    // An upload always keeps one batch out, so it progresses (and is woken by its own returns) however
    // busy the pool is.
    while (
      !this.#failure &&
      (this.#inFlight > maxBatchesInFlight || (this.#inFlight > 1 && this.#pool.saturated))
    ) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    if (this.#failure) throw this.#failure;
  }

  /** The hex digests of everything given to update(). */
  async finish(): Promise<Record<string, string>> {
    const upload = this.#upload;
    if (!upload) {
      const hashes = this.#names.map((name) => [name, createHash(name)] as const);
      if (this.#held) { for (const [, hash] of hashes) hash.update(this.#held); }
      this.#held = undefined;
      return Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest("hex")]));
    }
    if (this.#failure) throw this.#failure;
    const done = new Promise<Record<string, string>>((resolve, reject) => {
      this.#finished = { resolve, reject };
    });
    upload.finish();
    const digests = await done;
    this.close();
    return digests;
  }

  /** Leaves the worker (idempotent); needed on every path that does not reach finish(). */
  close(): void {
    this.#closed = true;
    this.#upload?.release();
    this.#upload = undefined;
    this.#held = undefined;
    this.#spare = [];
  }

  #send(batch: Batch): void {
    this.#inFlight++;
    this.#upload!.update(batch);
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** The file's bytes [start, start+length) as a byte stream read in 1 MiB steps; closes the file at the end. */
export function fileStream(file: Deno.FsFile, length: number): ReadableStream<Uint8Array> {
  let left = length;
  const finish = (controller: ReadableByteStreamController) => {
    file.close();
    controller.close();
    controller.byobRequest?.respond(0);
  };
  const source: UnderlyingByteSource = {
    type: "bytes",
    autoAllocateChunkSize: batchBytes,
    async pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view as Uint8Array;
      if (left <= 0) return finish(controller);
      let n: number | null;
      try {
        n = await file.read(left < view.length ? view.subarray(0, left) : view);
      } catch (err) {
        file.close();
        throw err;
      }
      if (n === null || n === 0) return finish(controller);
      left -= n;
      request.respond(n);
      if (left <= 0) {
        file.close();
        controller.close();
      }
    },
    cancel() {
      file.close();
    },
  };
  return new ReadableStream(source);
}
