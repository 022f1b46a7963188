// Worker thread for blob ingest: updates the digests of a stream's batches off the main thread (which is busy
// receiving and writing the bytes) and hands each batch back for reuse.

import { createHash, type Hash } from "node:crypto";

/** Messages from the ingest: the digests to compute, then batches in stream order, then finish. */
export type HashRequest = { names: string[] } | { batch: Uint8Array<ArrayBuffer> } | { finish: true };
/** Replies: each batch returned (transferred back) once hashed, then the hex digests. */
export type HashReply = { batch: Uint8Array<ArrayBuffer> } | { digests: Record<string, string> };

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<HashRequest>) => void) | null;
  postMessage(message: HashReply, transfer?: Transferable[]): void;
};

let hashes: [string, Hash][] = [];

scope.onmessage = (event) => {
  const message = event.data;
  if ("names" in message) {
    hashes = message.names.map((name) => [name, createHash(name)]);
  } else if ("batch" in message) {
    for (const [, hash] of hashes) hash.update(message.batch);
    scope.postMessage({ batch: message.batch }, [message.batch.buffer]);
  } else {
    scope.postMessage({
      digests: Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest("hex")])),
    });
  }
};
