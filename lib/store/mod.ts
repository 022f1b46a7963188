// The storage face every other module uses: a node's DataDir (data_dir.ts), its documents, log, blobs and
// counters, and the errors the store reports (errors.ts); backends live in file/, postgres/ and s3/.

export { DataDir, lockDataDir } from "./data_dir.ts";
export type { DataDirOptions, S3Settings, StorageHealth } from "./data_dir.ts";
export { EventLog } from "./file/eventlog.ts";
export type { CommittedBatch, LogRecord, StreamEvent } from "./commit_log.ts";
export { DocumentStore, VersionConflictError } from "./documents.ts";
export type { CommitPlan, DocChange, DocWrite, EventInput, Json, StoredDoc } from "./documents.ts";
export { BlobStore } from "./file/blobs.ts";
export type { Blobs, DigestName, StoredBlob } from "./blobs.ts";
export { UsageCounters } from "./file/counters.ts";
export type { Counters } from "./counters.ts";
export type { CommitLog } from "./commit_log.ts";
export {
  BlobNotFoundError,
  BlobTooLargeError,
  DigestMismatchError,
  StorageUnavailableError,
  StoreError,
} from "./errors.ts";
