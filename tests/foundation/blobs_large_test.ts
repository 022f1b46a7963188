// Blob bodies of several 1 MiB batches: byte and plain streams gathered into batches, digests from the hash
// worker, limits and checksum failures on that path, and 1 MiB-step file streams for whole bodies and ranges.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { BlobStore } from "../../lib/store/file/blobs.ts";
import { digestNames } from "../../lib/store/blobs.ts";
import { BlobTooLargeError, DigestMismatchError } from "../../lib/store/errors.ts";
import { chunkedStream } from "../helpers/streams.ts";

const MiB = 1024 * 1024;

/** 5.5 MiB of varied bytes (a cheap PRNG: no two batches alike). */
function sample(length = 5 * MiB + MiB / 2): Uint8Array {
  const bytes = new Uint8Array(length);
  let x = 2463534242;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** A plain stream of odd-sized chunks (read by copying into batches). */
function plainStream(bytes: Uint8Array, chunk = 100_003): ReadableStream<Uint8Array> {
  return chunkedStream(bytes, chunk);
}

/** A byte stream, the kind Deno.serve request bodies are. */
function byteStream(bytes: Uint8Array, chunk = 65_536): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    type: "bytes",
    pull(c) {
      if (offset >= bytes.length) {
        // A byte stream must answer a pending BYOB read after closing, or the reader waits forever.
        c.close();
        return c.byobRequest?.respond(0);
      }
      c.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

async function withStore(fn: (blobs: BlobStore, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const blobs = await BlobStore.open(dir);
  try {
    await fn(blobs, dir);
  } finally {
    blobs.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const data = sample();
const expected = Object.fromEntries(digestNames.map((n) => [n, createHash(n).update(data).digest("hex")]));

Deno.test("blobs: a multi-MiB body gets every digest and its exact bytes from byte and plain streams", async () => {
  await withStore(async (blobs, dir) => {
    for (const stream of [byteStream(data), plainStream(data), byteStream(data, 3 * MiB)]) {
      const stored = await blobs.ingest(stream, { maxBytes: 64 * MiB });
      assertEquals(stored.digests, expected);
      assertEquals(stored.size, data.length);
      const onDisk = await Deno.readFile(`${dir}/${stored.sha256.slice(0, 2)}/${stored.sha256}`);
      assert(onDisk.length === data.length && onDisk.every((b, i) => b === data[i]), "stored bytes differ");
    }
    assertEquals([...Deno.readDirSync(`${dir}/tmp`)], []);
  });
});

Deno.test("blobs: a multi-MiB body over the cap is 413 and a wrong checksum 422 naming the actual digest", async () => {
  await withStore(async (blobs, dir) => {
    await assertRejects(
      () => blobs.ingest(byteStream(data), { maxBytes: 3 * MiB }),
      (e) => e instanceof BlobTooLargeError && e.maxBytes === 3 * MiB,
    );
    await assertRejects(
      () =>
        blobs.ingest(plainStream(data), {
          maxBytes: 64 * MiB,
          digests: ["sha256"],
          expect: { algorithm: "sha1", hex: "00".repeat(20) },
          mismatchMessage: (actual) => `got ${actual}`,
        }),
      (e) =>
        e instanceof DigestMismatchError && e.algorithm === "sha1" && e.actualHex === expected.sha1 &&
        e.message === `got ${expected.sha1}`,
    );
    assertEquals([...Deno.readDirSync(`${dir}/tmp`)], []);
    const shards = [...Deno.readDirSync(dir)].filter((e) => e.name !== "tmp");
    assertEquals(shards.length, 0, "nothing kept");
  });
});

Deno.test("blobs: respond streams a multi-MiB blob whole and a range across batch boundaries", async () => {
  await withStore(async (blobs) => {
    const { sha256 } = await blobs.ingest(byteStream(data), { maxBytes: 64 * MiB });
    const whole = await blobs.respond(sha256, new Request("http://x/"));
    assertEquals(whole.headers.get("Content-Length"), String(data.length));
    const body = new Uint8Array(await whole.arrayBuffer());
    assertEquals(createHash("sha256").update(body).digest("hex"), sha256);
    const [start, end] = [MiB - 7, 3 * MiB + 11];
    const part = await blobs.respond(
      sha256,
      new Request("http://x/", { headers: { Range: `bytes=${start}-${end}` } }),
    );
    assertEquals(part.status, 206);
    const slice = new Uint8Array(await part.arrayBuffer());
    assertEquals(slice.length, end - start + 1);
    assert(slice.every((b, i) => b === data[start + i]), "range bytes differ");
    const tail = await blobs.respond(sha256, new Request("http://x/", { headers: { Range: "bytes=-5" } }));
    assertEquals(new Uint8Array(await tail.arrayBuffer()), data.slice(data.length - 5));
    const cancelled = await blobs.respond(sha256, new Request("http://x/"));
    const reader = cancelled.body!.getReader();
    await reader.read();
    await reader.cancel();
  });
});
