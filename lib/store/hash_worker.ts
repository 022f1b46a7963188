// Worker thread of the blob hash pool: updates the digests of several concurrent uploads' batches off the
// main thread (which is busy receiving and writing the bytes) and hands each batch back for reuse.

import { createHash, type Hash } from "node:crypto";

/**
 * Messages from an ingest, all tagged with its upload id: the digests to compute, then batches in stream
 * order, then finish (or abort, which drops the upload's state without an answer).
 */
export type HashRequest =
  | { id: number; names: string[] }
  | { id: number; batch: Uint8Array<ArrayBuffer> }
  | { id: number; finish: true }
  | { id: number; abort: true };
/** Replies: each batch returned (transferred back) once hashed, then the hex digests. */
export type HashReply =
  | { id: number; batch: Uint8Array<ArrayBuffer> }
  | { id: number; digests: Record<string, string> };

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<HashRequest>) => void) | null;
  postMessage(message: HashReply, transfer?: Transferable[]): void;
};

/** Digest states of the uploads in progress on this worker. */
const uploads = new Map<number, [string, Hash][]>();

scope.onmessage = (event) => {
  const message = event.data;
  const { id } = message;
  if ("names" in message) {
    uploads.set(id, message.names.map((name) => [name, createHash(name)]));
  } else if ("batch" in message) {
    // A batch of an aborted upload (sent before its abort) is returned unhashed.
    for (const [, hash] of uploads.get(id) ?? []) hash.update(message.batch);
    scope.postMessage({ id, batch: message.batch }, [message.batch.buffer]);
  } else if ("finish" in message) {
    const hashes = uploads.get(id) ?? [];
    uploads.delete(id);
    scope.postMessage({
      id,
      digests: Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest("hex")])),
    });
  } else {
    uploads.delete(id);
  }
};
