// The failures lib/store reports, each with its facts as data (the engine, the limit, the digests). The one
// place lib/store meets the HTTP vocabulary: StoreError still extends ApiError (lib/errors.ts), because the
// suites and the API families' handlers match `instanceof ApiError` and its status; see docs/storage.md.

import { ApiError } from "../errors.ts";

/** A failure of the store's own; `status` is the answer an API family gives for it. */
export abstract class StoreError extends ApiError {}

/**
 * A storage engine that cannot be reached (PostgreSQL, the object store): a 503 with Retry-After in every API
 * family's error shape, never a 500 or a crash; the request may be retried once the engine is back.
 */
export class StorageUnavailableError extends StoreError {
  readonly engine: "database" | "object store";
  constructor(engine: "database" | "object store", cause?: unknown) {
    super(503, `the ${engine} is unreachable; retry shortly`, { headers: { "Retry-After": "5" } });
    this.name = "StorageUnavailableError";
    this.engine = engine;
    this.cause = cause;
  }
}

/** No blob is stored under this name (answered 404). */
export class BlobNotFoundError extends StoreError {
  readonly sha256: string;
  constructor(sha256: string) {
    super(404, "blob not found");
    this.name = "BlobNotFoundError";
    this.sha256 = sha256;
  }
}

/** An ingest went past its byte limit; nothing was kept (answered 413). */
export class BlobTooLargeError extends StoreError {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(413, `upload exceeds the limit of ${maxBytes} bytes`);
    this.name = "BlobTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** An ingest's body does not have the digest the caller expected; nothing was kept (answered 422). */
export class DigestMismatchError extends StoreError {
  readonly algorithm: string;
  readonly actualHex: string;
  /** `message` is in the caller's words (IngestOptions.mismatchMessage). */
  constructor(algorithm: string, actualHex: string, message: string) {
    super(422, message);
    this.name = "DigestMismatchError";
    this.algorithm = algorithm;
    this.actualHex = actualHex;
  }
}
