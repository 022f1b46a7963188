// Test streams: a byte array served as a plain ReadableStream in fixed-size chunks.

/** `bytes` as a plain (non-byte) stream of `chunk`-sized pieces, each a fresh copy. */
export function chunkedStream(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(c) {
      if (offset >= bytes.length) return c.close();
      c.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}
