// Content-addressed blobs under data/blobs/: streamed in with all digests computed on the way, fsynced
// and renamed into place before anything points at them; streamed out from the file (blob_http.ts answers Range,
// ETag and 304).

import { BlobNotFoundError } from "../errors.ts";
import { BatchReader, fileStream, ParallelDigests } from "../blob_stream.ts";
import { HashPool, type HashPoolOptions } from "../hash_pool.ts";
import { blobResponse } from "../blob_http.ts";
import { ensureDir, removeTempFiles, syncDir, tempSuffix } from "./fsutil.ts";
import {
  blobName,
  type BlobReferences,
  type Blobs,
  checkExpectedDigest,
  ingestDigests,
  type IngestOptions,
  pumpBatches,
  type StoredBlob,
} from "../blobs.ts";

export interface BlobStoreOptions {
  /** The digest threads shared by this store's uploads (default: at most 2, stopped after 30 s idle). */
  hashing?: HashPoolOptions;
}

export class BlobStore implements Blobs {
  readonly dir: string;
  #tmpCounter = 0;
  readonly #hashing: HashPool;
  /** Removals under way, by blob name: an ingest of the same content waits for one before its rename. */
  readonly #removing = new Map<string, Promise<void>>();

  private constructor(dir: string, options: BlobStoreOptions) {
    this.dir = dir;
    this.#hashing = new HashPool(options.hashing);
  }

  static async open(dir: string, options: BlobStoreOptions = {}): Promise<BlobStore> {
    await ensureDir(`${dir}/tmp`);
    await removeTempFiles(`${dir}/tmp`);
    return new BlobStore(dir, options);
  }

  /** Digest worker threads alive for this store's uploads now. */
  get hashWorkers(): number {
    return this.#hashing.workerCount;
  }

  /** Stops the digest threads (uploads still hashing fail); later large ingests fail. Idempotent. */
  close(): void {
    this.#hashing.close();
  }

  #path(sha256: string): string {
    if (!blobName.test(sha256)) throw new RangeError("a blob name is 64 lowercase hex characters");
    return `${this.dir}/${sha256.slice(0, 2)}/${sha256}`;
  }

  async has(sha256: string): Promise<boolean> {
    try {
      await Deno.stat(this.#path(sha256));
      return true;
    } catch {
      return false;
    }
  }

  async size(sha256: string): Promise<number | undefined> {
    try {
      return (await Deno.stat(this.#path(sha256))).size;
    } catch {
      return undefined;
    }
  }

  /**
   * Streams `body` to a temp file in 1 MiB batches while the digests are computed in parallel (a thread of
   * the store's hash pool), then makes it durable (fdatasync, rename, directory fsync) under its sha256.
   */
  async ingest(body: ReadableStream<Uint8Array>, options: IngestOptions): Promise<StoredBlob> {
    const tmp = `${this.dir}/tmp/${Date.now()}-${Deno.pid}-${++this.#tmpCounter}${tempSuffix}`;
    const reader = new BatchReader(body);
    const hashing = new ParallelDigests(ingestDigests(options), this.#hashing);
    let file: Deno.FsFile | undefined;
    let kept = false;
    try {
      const out = file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
      // Synchronous on purpose: the main thread has nothing else to do for this upload, and async
      // writes cost a thread hand-off per batch. The batch is written before the worker takes it over.
      const size = await pumpBatches(reader, hashing, options, (batch) => writeAllSync(out, batch));
      const digests = await hashing.finish() as StoredBlob["digests"];
      await file.syncData();
      file.close();
      file = undefined;
      checkExpectedDigest(digests, options);
      const final = this.#path(digests.sha256);
      await ensureDir(`${this.dir}/${digests.sha256.slice(0, 2)}`);
      options.hold?.(digests.sha256);
      // A collection that decided to remove this name before the hold finishes first, then the rename places
      // the new file: the order of these two is what keeps a concurrent upload of the same content.
      await this.#removing.get(digests.sha256);
      await Deno.rename(tmp, final);
      await syncDir(`${this.dir}/${digests.sha256.slice(0, 2)}`);
      kept = true;
      return { sha256: digests.sha256, size, digests };
    } catch (err) {
      reader.cancel(err);
      throw err;
    } finally {
      hashing.close();
      file?.close();
      if (!kept) await Deno.remove(tmp).catch(() => {});
    }
  }

  /** A streamed response for the blob (blob_http.ts answers Range and conditionals); 404 when missing. */
  async respond(sha256: string, request: Request, headers: HeadersInit = {}): Promise<Response> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path(sha256), { read: true });
    } catch {
      throw new BlobNotFoundError(sha256);
    }
    let size: number;
    try {
      size = (await file.stat()).size;
    } catch (err) {
      file.close();
      throw err;
    }
    return await blobResponse(sha256, request, headers, {
      size,
      async stream(start, length) {
        try {
          if (start > 0) await file.seek(start, Deno.SeekMode.Start);
        } catch (err) {
          file.close();
          throw err;
        }
        // Up to the end of the file (a whole download, a resume): the file's own stream, which Deno's HTTP
        // server reads in Rust and closes when the response ends or the client goes, with no JS buffer per chunk
        // (docs/benchmarks.md: a bare Deno.serve sends it faster). A range ending earlier is cut by the JS stream.
        if (start + length === size) return file.readable;
        return fileStream(file, length);
      },
      discard: () => file.close(),
    });
  }

  /** Nothing to confirm: this process's collection sees every hold (Blobs.confirm). */
  confirm(_sha256: string, _referenced: boolean): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Removes each named blob that `references` neither references nor holds when it is about to go (checked then,
   * not before: an upload of the same content may have placed and held it meanwhile). Returns how many went.
   */
  async removeOrphans(names: Iterable<string>, references: BlobReferences): Promise<number> {
    let removed = 0;
    for (const name of names) {
      if (!blobName.test(name) || references.has(name) || this.#removing.has(name)) continue;
      // Synchronously after the check: an ingest holding this name from now on waits for the removal.
      const removal = Deno.remove(this.#path(name)).then(() => void removed++, () => {});
      this.#removing.set(name, removal);
      await removal;
      this.#removing.delete(name);
    }
    return removed;
  }

  /**
   * Every blob on disk that `references` disowns and that is older than `graceMs` (a full scan, for blobs left
   * by a crash or an older version; live changes are collected by name with removeOrphans).
   */
  async collectOrphans(references: BlobReferences, graceMs = 60_000): Promise<number> {
    const candidates: string[] = [];
    const now = Date.now();
    for await (const shard of Deno.readDir(this.dir)) {
      if (!shard.isDirectory || !/^[0-9a-f]{2}$/.test(shard.name)) continue;
      for await (const entry of Deno.readDir(`${this.dir}/${shard.name}`)) {
        if (!blobName.test(entry.name) || references.has(entry.name)) continue;
        const info = await Deno.stat(`${this.dir}/${shard.name}/${entry.name}`).catch(() => undefined);
        if (info && now - (info.mtime?.getTime() ?? 0) >= graceMs) candidates.push(entry.name);
      }
    }
    return await this.removeOrphans(candidates, references);
  }
}

function writeAllSync(file: Deno.FsFile, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}
