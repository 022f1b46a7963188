// What every blob store shares (the data directory's, file/blobs.ts, and an S3 bucket's, s3/blobs.ts): the
// Blobs interface, digest names, ingest options and checks, batch pumping (downloads are answered by
// blob_http.ts).

import { BlobTooLargeError, DigestMismatchError } from "./errors.ts";
import type { Batch, BatchReader, ParallelDigests } from "./blob_stream.ts";

export type DigestName = "md5" | "sha1" | "sha256" | "sha384" | "sha512";
export const digestNames: readonly DigestName[] = ["md5", "sha1", "sha256", "sha384", "sha512"];

export interface StoredBlob {
  sha256: string;
  size: number;
  /** Every digest by default; with IngestOptions.digests only those asked for (sha256 always). */
  digests: Partial<Record<DigestName, string>> & { sha256: string };
}

export interface IngestOptions {
  /** Bytes allowed; more fails with BlobTooLargeError and nothing is kept. */
  maxBytes: number;
  /** When given, the body must have this digest (hex, case-insensitive) or it fails with DigestMismatchError. */
  expect?: { algorithm: DigestName; hex: string };
  /** Message for a checksum mismatch, in the caller's words; a function gets the actual hex digest. */
  mismatchMessage?: string | ((actualHex: string) => string);
  /** Digests to compute (sha256 and expect's algorithm are always added); default all five. */
  digests?: readonly DigestName[];
  /**
   * Called with the blob's name just before the file takes it: the caller holds the blob from then on, so an
   * orphan collection never removes it between its rename and the caller's commit (see collectOrphans). A caller
   * that holds calls Blobs.confirm once its commit is made (or failed).
   */
  hold?: (sha256: string) => void;
}

/** The digests an ingest computes: those asked for plus sha256 and the expected one; all five by default. */
export function ingestDigests(options: IngestOptions): readonly DigestName[] {
  return options.digests
    ? digestNames.filter((n) =>
      n === "sha256" || n === options.expect?.algorithm || options.digests!.includes(n)
    )
    : digestNames;
}

/**
 * Reads `reader` batch by batch, failing with BlobTooLargeError past `options.maxBytes`, hands each batch to
 * `write` and then to `hashing` (whose worker takes the batch's buffer over); returns the size read.
 */
export async function pumpBatches(
  reader: BatchReader,
  hashing: ParallelDigests,
  options: IngestOptions,
  write: (batch: Batch) => void | Promise<void>,
): Promise<number> {
  let size = 0;
  for (;;) {
    const batch = await reader.read(hashing.buffer());
    if (!batch) return size;
    size += batch.length;
    if (size > options.maxBytes) {
      throw new BlobTooLargeError(options.maxBytes);
    }
    await write(batch);
    await hashing.update(batch);
  }
}

/** Fails with DigestMismatchError (in the caller's words) when the body's digest is not `options.expect`'s. */
export function checkExpectedDigest(digests: StoredBlob["digests"], options: IngestOptions): void {
  if (!options.expect || digests[options.expect.algorithm] === options.expect.hex.toLowerCase()) return;
  const actual = digests[options.expect.algorithm]!;
  const message = options.mismatchMessage;
  throw new DigestMismatchError(
    options.expect.algorithm,
    actual,
    typeof message === "function"
      ? message(actual)
      : message ?? `checksum mismatch: the ${options.expect.algorithm} differs`,
  );
}

/** What orphan collection asks, at the moment of each removal: is this blob referenced or held? */
export interface BlobReferences {
  has(sha256: string): boolean;
}

/** What the API families use: the data directory's blobs and an S3 bucket's (s3/blobs.ts) alike. */
export interface Blobs {
  has(sha256: string): Promise<boolean>;
  size(sha256: string): Promise<number | undefined>;
  ingest(body: ReadableStream<Uint8Array>, options: IngestOptions): Promise<StoredBlob>;
  /**
   * A response for the blob (Range, ETag, 304, 416: blob_http.ts). With `redirect`, a store that can hand the bytes out itself
   * (S3 with WHARF_DOWNLOADS=redirect) answers a GET with 302 to a short-lived URL instead (a HEAD is answered
   * directly: the URL is signed for GET only).
   */
  respond(
    sha256: string,
    request: Request,
    headers?: HeadersInit,
    options?: { redirect?: boolean },
  ): Promise<Response>;
  /**
   * After an ingest with a hold: `referenced` when the commit naming the blob is durable. A store shared by
   * several nodes makes sure the blob is still there (another node's removal may have missed the hold) and drops
   * what it kept for that; a no-op on the data directory, where every hold is seen by the one collection.
   */
  confirm(sha256: string, referenced: boolean): Promise<void>;
  removeOrphans(names: Iterable<string>, references: BlobReferences): Promise<number>;
  collectOrphans(references: BlobReferences, graceMs?: number): Promise<number>;
  readonly hashWorkers: number;
  close(): void;
}

export const blobName = /^[0-9a-f]{64}$/;
