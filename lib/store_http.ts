// The one place a store failure (lib/store/errors.ts) becomes an HTTP answer: its status, message and headers,
// which every API family then renders in its own shape (docs/storage.md).

import { ApiError } from "./errors.ts";
import {
  BlobNotFoundError,
  BlobTooLargeError,
  DigestMismatchError,
  StorageUnavailableError,
  StoreError,
} from "./store/errors.ts";

/** How long a client is told to wait before retrying while a storage engine is unreachable. */
const unavailableRetryAfterSeconds = 5;

/** The answer for a store failure: 503 + Retry-After, 404, 413 or 422; undefined for one not listed (a 500). */
export function storeErrorAnswer(err: StoreError): ApiError | undefined {
  if (err instanceof StorageUnavailableError) {
    return new ApiError(503, err.message, {
      headers: { "Retry-After": String(unavailableRetryAfterSeconds) },
    });
  }
  if (err instanceof BlobNotFoundError) return new ApiError(404, err.message);
  if (err instanceof BlobTooLargeError) return new ApiError(413, err.message);
  if (err instanceof DigestMismatchError) return new ApiError(422, err.message);
  // A store failure this table does not know yet is the server's fault: logged and answered 500 by the router.
  return undefined;
}

/** `err` as the client error to answer: an ApiError as it is, a store failure mapped; otherwise undefined. */
export function asApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  return err instanceof StoreError ? storeErrorAnswer(err) : undefined;
}

/** `err` with a store failure mapped to its ApiError (for catch sites that rethrow or match statuses). */
export function httpErrorOf(err: unknown): unknown {
  return err instanceof StoreError ? storeErrorAnswer(err) ?? err : err;
}
