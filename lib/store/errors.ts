// The failures lib/store reports, each with its facts as data (the engine, the limit, the digests). No HTTP here:
// lib/store_http.ts is the one place that says which answer an API family gives for each (docs/storage.md).

/** A failure of the store's own (not a bug): the API families answer it through lib/store_http.ts. */
export abstract class StoreError extends Error {}

/**
 * A storage engine that cannot be reached (PostgreSQL, the object store); the request may be retried once the
 * engine is back.
 */
export class StorageUnavailableError extends StoreError {
  readonly engine: "database" | "object store";
  constructor(engine: "database" | "object store", cause?: unknown) {
    super(`the ${engine} is unreachable; retry shortly`);
    this.name = "StorageUnavailableError";
    this.engine = engine;
    this.cause = cause;
  }
}

/** No blob is stored under this name. */
export class BlobNotFoundError extends StoreError {
  readonly sha256: string;
  constructor(sha256: string) {
    super("blob not found");
    this.name = "BlobNotFoundError";
    this.sha256 = sha256;
  }
}

/** An ingest went past its byte limit; nothing was kept. */
export class BlobTooLargeError extends StoreError {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`upload exceeds the limit of ${maxBytes} bytes`);
    this.name = "BlobTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** An ingest's body does not have the digest the caller expected; nothing was kept. */
export class DigestMismatchError extends StoreError {
  readonly algorithm: string;
  readonly actualHex: string;
  /** `message` is in the caller's words (IngestOptions.mismatchMessage). */
  constructor(algorithm: string, actualHex: string, message: string) {
    super(message);
    this.name = "DigestMismatchError";
    this.algorithm = algorithm;
    this.actualHex = actualHex;
  }
}
