// Content-addressed blobs in an S3 bucket: uploads stream through wharf into a multipart upload under tmp/
// while every digest is computed on the way, then are copied to blobs/<sha256> before anything points at them;
// downloads are a 302 to a presigned GET (WHARF_DOWNLOADS=redirect; HEADs answered here) or a ranged GetObject
// streamed through (proxy; blob_http.ts answers Range, ETag and 304).
//
// Removal across nodes. A node holds a blob it is uploading (IngestOptions.hold) until the commit naming it, but
// only its own orphan collection sees that hold. Node B may decide that blob X lost its last reference while node
// A ingests the same content for a new one (A's commit not yet made, or not yet in B's view). Three rules keep X:
// 1. Every ingest writes blobs/<sha256> again (a copy of its tmp/ object) even when X exists: the blob anyone
//    is about to reference was modified just now.
// 2. A removal (by name or by the full scan) HEADs the blob right before its DELETE and leaves it when it was
//    modified within the removal grace (WHARF_S3_REMOVAL_GRACE, 10 minutes); it is looked at again once old
//    enough. The grace must exceed by far an ingest's copy → commit → view on every node (commits give up
//    after ~15 s); minutes also absorb clock skew between the nodes and the store. The DELETE is sent only if
//    the HEAD answered within 2 s (a node that stalled in between decides again later).
// 3. (1)+(2) still lose X when A's copy lands between B's HEAD and B's DELETE. So an ingest with a hold keeps its
//    tmp/ object, and after the commit naming the blob the caller calls confirm(): it HEADs blobs/<sha256> and
//    copies the tmp/ object back if a removal got there first, and does so once more 10 s after the copy (then
//    drops the tmp/ object), as B's DELETE may still be on its way at the first check (a node stalled under
//    load). A removal bounds that: its DELETE is sent only if the HEAD answered within 2 s, and given up after
//    3 s more. What remains is a DELETE that reached the store in time but takes effect later than that; a
//    conditional DELETE (If-Match, where a store has it) could not tell either, as a re-written object keeps its
//    ETag. With a removal grace under 10 s (tests) these three times shrink in proportion, down to 1 s, 0.2 s
//    and 0.3 s.
// Leftover tmp/ objects (an ingest drops its own after confirm, or when its commit fails) and abandoned multipart
// uploads are collected after a day: a large upload over a slow link takes hours, and on stores that date a
// completed multipart object by its initiation (AWS) a just-finished upload's tmp/ object can look hours old.

import { Buffer } from "node:buffer";
import { PassThrough } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { BatchReader, ParallelDigests } from "../blob_stream.ts";
import { HashPool } from "../hash_pool.ts";
import { blobResponse } from "../blob_http.ts";
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
import type { S3Location } from "./client.ts";
import { ObjectStoreProbe } from "./probe.ts";
import { defaultRemovalGraceMs } from "./settings.ts";
import { isObjectStoreUnreachable } from "../unavailable.ts";
import { BlobNotFoundError, StorageUnavailableError, StoreError } from "../errors.ts";

export interface S3BlobOptions {
  downloads: "redirect" | "proxy";
  /** How long a presigned download URL is valid. */
  urlTtlMs: number;
  /** A blob modified more recently is never removed (see the module comment); default 10 minutes. */
  removalGraceMs?: number;
}

/** How long after its copy an ingest's blob is checked again (module comment (3)); at most the removal grace. */
const settleMs = 10_000;
/** Multipart uploads under tmp/ initiated longer ago, and tmp/ objects older, are left over (the full scan ends them). */
const abandonedUploadMs = 24 * 3600_000;
/** Object stores report modification times in whole seconds (Swift rounds up): a re-examination waits this more. */
const clockSlackMs = 1_500;

const partBytes = 8 * 1024 * 1024;
/** CopyObject copies at most 5 GiB; larger blobs are copied part by part. */
const singleCopyLimit = 5 * 1024 * 1024 * 1024;
const copyPartBytes = 1024 * 1024 * 1024;

export class S3BlobStore implements Blobs {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #options: S3BlobOptions;
  readonly #hashing = new HashPool();
  readonly #removing = new Map<string, Promise<void>>();
  readonly #graceMs: number;
  readonly #settleMs: number;
  /** Second checks of confirmed blobs still to come (cleared on close: their tmp/ objects go with the scan). */
  readonly #settling = new Set<ReturnType<typeof setTimeout>>();
  /** Blobs left because they were young, by name: looked at again when old enough. */
  readonly #recheck = new Map<string, ReturnType<typeof setTimeout>>();
  /** tmp/ objects of ingests with a hold, by blob name, until the caller's confirm(). */
  readonly #unconfirmed = new Map<string, Array<{ tmpKey: string; size: number; copiedAt: number }>>();
  /** Set by the last request that could not reach the store, cleared by the next that did (for /health). */
  lastError: unknown;
  /** Requests that could not reach the store, since start (for metrics). */
  unreachableErrors = 0;

  readonly #probe: ObjectStoreProbe;
  #lastErrorAt = 0;
  #lastOkAt = 0;

  constructor(client: S3Client, location: S3Location, options: S3BlobOptions) {
    this.#client = client;
    this.#bucket = location.bucket;
    this.#prefix = location.prefix;
    this.#options = options;
    this.#graceMs = options.removalGraceMs ?? defaultRemovalGraceMs;
    // Never below 1 s: a removal's time bounds are fractions of it.
    this.#settleMs = Math.max(1000, Math.min(settleMs, this.#graceMs));
    this.#probe = new ObjectStoreProbe(async (abortSignal) => {
      try {
        await client.send(new HeadBucketCommand({ Bucket: location.bucket }), { abortSignal });
      } catch (err) {
        // An answer that is not an outage (403, 404) still proves the store is reachable.
        if (isObjectStoreUnreachable(err) || abortSignal.aborted) throw err;
      }
    }, { cacheMs: 3000, waitMs: 1500 });
  }

  /**
   * Whether the store answers (for /health): a HeadBucket at most every 3 s, waited on at most 1.5 s. A request
   * that failed since the last probe that answered also counts as down.
   */
  async reachable(): Promise<boolean> {
    const probed = await this.#probe.up();
    // The newest evidence wins: the probe's answer, or a request that failed or succeeded after it.
    const newest = Math.max(this.#probe.answeredAt, this.#lastErrorAt, this.#lastOkAt);
    if (newest === this.#lastOkAt && newest > this.#probe.answeredAt) return true;
    if (newest === this.#lastErrorAt && newest > this.#probe.answeredAt) return false;
    if (probed) this.lastError = undefined;
    return probed;
  }

  get hashWorkers(): number {
    return this.#hashing.workerCount;
  }

  close(): void {
    this.#hashing.close();
    for (const timer of [...this.#recheck.values(), ...this.#settling]) clearTimeout(timer);
    this.#recheck.clear();
    this.#settling.clear();
  }

  #key(sha256: string): string {
    if (!blobName.test(sha256)) throw new RangeError("a blob name is 64 lowercase hex characters");
    return `${this.#prefix}blobs/${sha256}`;
  }

  async size(sha256: string): Promise<number | undefined> {
    try {
      const head = await this.#send<{ ContentLength?: number }>(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(sha256) }),
      );
      return head.ContentLength ?? 0;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.size(sha256)) !== undefined;
  }

  async ingest(body: ReadableStream<Uint8Array>, options: IngestOptions): Promise<StoredBlob> {
    const reader = new BatchReader(body);
    const hashing = new ParallelDigests(ingestDigests(options), this.#hashing);
    const tmpKey = `${this.#prefix}tmp/${crypto.randomUUID()}`;
    // A Node stream body: the SDK's multipart Upload does not take a web ReadableStream under Deno.
    const stream = new PassThrough({ highWaterMark: partBytes });
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: tmpKey, Body: stream },
      partSize: partBytes,
      queueSize: 2,
      leavePartsOnError: false,
    });
    let failure: unknown;
    const done = upload.done().catch((err) => {
      failure = err;
      throw err;
    });
    done.catch(() => {});
    let uploaded = false;
    let kept = false;
    try {
      const size = await pumpBatches(reader, hashing, options, async (batch) => {
        // A copy for the upload: the hash worker takes the batch's buffer over.
        if (!stream.write(Buffer.from(batch))) await drained(stream, done);
        if (failure) throw failure;
      });
      stream.end();
      await done;
      uploaded = true;
      const digests = await hashing.finish() as StoredBlob["digests"];
      checkExpectedDigest(digests, options);
      options.hold?.(digests.sha256);
      await this.#removing.get(digests.sha256);
      this.#reached();
      // Written even when the blob exists: see the module comment (1).
      await this.#copy(tmpKey, this.#key(digests.sha256), size);
      if (options.hold) {
        const pending = this.#unconfirmed.get(digests.sha256) ?? [];
        pending.push({ tmpKey, size, copiedAt: Date.now() });
        this.#unconfirmed.set(digests.sha256, pending);
        kept = true;
      }
      return { sha256: digests.sha256, size, digests };
    } catch (err) {
      reader.cancel(err);
      if (!uploaded) {
        stream.destroy();
        await upload.abort().catch(() => {});
      }
      throw this.#unavailable(err);
    } finally {
      hashing.close();
      if (uploaded && !kept) await this.#dropTmp(tmpKey);
    }
  }

  /**
   * Ends a held ingest of `sha256` on the store's side (module comment (3)): when `referenced` (the commit naming
   * the blob is durable) the blob is checked and restored from the upload's tmp/ object if a removal on another
   * node got there first; then the tmp/ object goes. Nothing to do for an ingest without a hold.
   */
  async confirm(sha256: string, referenced: boolean): Promise<void> {
    const pending = this.#unconfirmed.get(sha256);
    const upload = pending?.pop();
    if (pending?.length === 0) this.#unconfirmed.delete(sha256);
    if (!upload) return;
    if (!referenced) return await this.#dropTmp(upload.tmpKey);
    try {
      await this.#restoreIfGone(sha256, upload);
    } finally {
      const timer = setTimeout(() => {
        this.#settling.delete(timer);
        this.#restoreIfGone(sha256, upload).catch(() => {}).finally(() => this.#dropTmp(upload.tmpKey));
      }, Math.max(0, upload.copiedAt + this.#settleMs - Date.now()));
      Deno.unrefTimer(timer);
      this.#settling.add(timer);
    }
  }

  async #restoreIfGone(sha256: string, upload: { tmpKey: string; size: number }): Promise<void> {
    if ((await this.size(sha256)) === upload.size) return;
    await this.#copy(upload.tmpKey, this.#key(sha256), upload.size).catch((err) => {
      throw this.#unavailable(err);
    });
  }

  async #dropTmp(tmpKey: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: tmpKey })).catch(() => {});
  }

  async #copy(from: string, to: string, size: number): Promise<void> {
    const source = `${this.#bucket}/${from}`;
    if (size <= singleCopyLimit) {
      await this.#client.send(new CopyObjectCommand({ Bucket: this.#bucket, Key: to, CopySource: source }));
      return;
    }
    const { UploadId } = await this.#client.send(
      new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: to }),
    );
    try {
      const parts: Array<{ ETag: string; PartNumber: number }> = [];
      for (let start = 0, n = 1; start < size; start += copyPartBytes, n++) {
        const end = Math.min(size, start + copyPartBytes) - 1;
        const part = await this.#client.send(
          new UploadPartCopyCommand({
            Bucket: this.#bucket,
            Key: to,
            UploadId,
            PartNumber: n,
            CopySource: source,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        parts.push({ ETag: part.CopyPartResult!.ETag!, PartNumber: n });
      }
      await this.#client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: to,
          UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (err) {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: to, UploadId }))
        .catch(() => {});
      throw err;
    }
  }

  async respond(
    sha256: string,
    request: Request,
    headers: HeadersInit = {},
    options: { redirect?: boolean } = {},
  ): Promise<Response> {
    const key = this.#key(sha256);
    const size = await this.size(sha256);
    if (size === undefined) throw new BlobNotFoundError(sha256);
    const out = new Headers(headers);
    // A HEAD is answered here: a presigned URL is signed for GET, so the store would refuse a HEAD sent to it.
    if (options.redirect && this.#options.downloads === "redirect" && request.method !== "HEAD") {
      const url = await getSignedUrl(this.#client, new GetObjectCommand({ Bucket: this.#bucket, Key: key }), {
        expiresIn: Math.max(1, Math.round(this.#options.urlTtlMs / 1000)),
      });
      out.set("Location", url);
      // The URL is a short-lived credential: no cache may keep it.
      out.set("Cache-Control", "private, no-store");
      return new Response(null, { status: 302, headers: out });
    }
    return await blobResponse(sha256, request, out, {
      size,
      stream: async (start, length) => {
        const object = await this.#send<{ Body?: { transformToWebStream(): ReadableStream } }>(
          new GetObjectCommand({
            Bucket: this.#bucket,
            Key: key,
            Range: `bytes=${start}-${start + length - 1}`,
          }),
        );
        return object.Body!.transformToWebStream();
      },
      discard: () => {},
    });
  }

  /** Sends one command; a store that cannot be reached becomes StorageUnavailableError. */
  // deno-lint-ignore no-explicit-any
  async #send<T>(command: any): Promise<T> {
    try {
      const out = await this.#client.send(command) as T;
      this.#reached();
      return out;
    } catch (err) {
      throw this.#unavailable(err);
    }
  }

  /** A request reached the store (for /health). */
  #reached(): void {
    this.lastError = undefined;
    this.#lastOkAt = Date.now();
  }

  #unavailable(err: unknown): unknown {
    if (err instanceof StoreError || !isObjectStoreUnreachable(err)) return err;
    this.lastError = err;
    this.#lastErrorAt = Date.now();
    this.unreachableErrors++;
    return new StorageUnavailableError("object store", err);
  }

  /**
   * Removes each named blob that `references` neither references nor holds and that was modified longer than the
   * removal grace ago, both checked right before its DELETE; a younger one is looked at again when old enough.
   */
  async removeOrphans(names: Iterable<string>, references: BlobReferences): Promise<number> {
    let removed = 0;
    for (const name of names) {
      if (!blobName.test(name) || references.has(name) || this.#removing.has(name)) continue;
      const removal = this.#removeIfOld(name, references).then((gone) => void (gone && removed++), () => {});
      // An ingest of the same content on this node waits for the removal before its copy.
      this.#removing.set(name, removal);
      await removal;
      this.#removing.delete(name);
    }
    return removed;
  }

  async #removeIfOld(name: string, references: BlobReferences): Promise<boolean> {
    const asked = Date.now();
    let modified: number;
    try {
      const head = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(name) }),
      );
      modified = head.LastModified?.getTime() ?? asked;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
    const age = asked - modified;
    if (age < this.#graceMs) {
      this.#recheckLater(name, references, this.#graceMs - age);
      return false;
    }
    // Bounded in time (module comment (3)): a node that stalled since its HEAD decides again later.
    if (Date.now() - asked > this.#settleMs / 5) {
      this.#recheckLater(name, references, 0);
      return false;
    }
    if (references.has(name)) return false;
    try {
      await this.#client.send(
        new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(name) }),
        { abortSignal: AbortSignal.timeout(this.#settleMs * 3 / 10) },
      );
    } catch (err) {
      this.#recheckLater(name, references, 0);
      throw err;
    }
    return true;
  }

  #recheckLater(name: string, references: BlobReferences, ms: number): void {
    if (this.#recheck.has(name)) return;
    const timer = setTimeout(() => {
      this.#recheck.delete(name);
      this.removeOrphans([name], references).catch(() => {});
    }, ms + clockSlackMs);
    Deno.unrefTimer(timer);
    this.#recheck.set(name, timer);
  }

  /**
   * Unreferenced blobs older than `graceMs` and the removal grace; tmp/ objects and multipart uploads left for a
   * day (module comment).
   */
  async collectOrphans(references: BlobReferences, graceMs = 60_000): Promise<number> {
    const now = Date.now();
    const before = now - Math.max(graceMs, this.#graceMs);
    const candidates: string[] = [];
    let removed = 0;
    for await (const object of this.#list(`${this.#prefix}blobs/`)) {
      const name = object.key.slice(this.#prefix.length + 6);
      if (object.modified < before && blobName.test(name) && !references.has(name)) candidates.push(name);
    }
    const leftOver = now - Math.max(graceMs, abandonedUploadMs);
    for await (const object of this.#list(`${this.#prefix}tmp/`)) {
      if (object.modified >= leftOver) continue;
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: object.key }));
      removed++;
    }
    const uploads = await this.#client.send(
      new ListMultipartUploadsCommand({ Bucket: this.#bucket, Prefix: `${this.#prefix}tmp/` }),
    );
    for (const u of uploads.Uploads ?? []) {
      if ((u.Initiated?.getTime() ?? 0) >= leftOver) continue;
      await this.#client.send(
        new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: u.Key, UploadId: u.UploadId }),
      )
        .catch(() => {});
    }
    return removed + await this.removeOrphans(candidates, references);
  }

  async *#list(prefix: string): AsyncGenerator<{ key: string; modified: number }> {
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) yield { key: o.Key!, modified: o.LastModified?.getTime() ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** Waits for the stream to take more, or for the upload to fail (then nothing would ever drain it). */
function drained(stream: PassThrough, upload: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      stream.off("drain", done);
      resolve();
    };
    stream.on("drain", done);
    upload.then(done, (err) => {
      stream.off("drain", done);
      reject(err);
    });
  });
}
