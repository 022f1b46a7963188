// The blob contract on both stores: the data directory and an S3 bucket (a real Swift with s3api from
// tests/fixtures/swift.ts; skipped with the reason when Swift is missing).

import { createHash } from "node:crypto";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { type Blobs, BlobStore } from "../../lib/store/mod.ts";
import { BlobNotFoundError, BlobTooLargeError, DigestMismatchError } from "../../lib/store/errors.ts";
import { createS3Client, ensureBucket, parseBlobStore } from "../../lib/store/s3/client.ts";
import { S3BlobStore } from "../../lib/store/s3/blobs.ts";
import { startSwift, type SwiftServer, swiftSkipReason } from "../fixtures/swift.ts";

if (swiftSkipReason) console.warn(`blob contract on S3 skipped: ${swiftSkipReason}`);

let swift: SwiftServer | undefined;
let buckets = 0;

interface Store {
  blobs: Blobs;
  cleanup(): Promise<void>;
}

const stores: Array<
  { name: string; ignore: boolean; open(downloads?: "redirect" | "proxy"): Promise<Store> }
> = [
  {
    name: "file",
    ignore: false,
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "wharf-blobs-" });
      const blobs = await BlobStore.open(dir);
      return {
        blobs,
        async cleanup() {
          blobs.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
  },
  {
    name: "s3",
    ignore: swiftSkipReason !== undefined,
    async open(downloads = "proxy") {
      swift ??= await startSwift();
      const env = swift.env(`wharf-test-${++buckets}`);
      const location = parseBlobStore(`${env.WHARF_BLOB_STORE}/some/prefix`);
      const client = createS3Client(env);
      await ensureBucket(client, location.bucket);
      await ensureBucket(client, location.bucket); // a second node creating it again is fine
      const blobs = new S3BlobStore(client, location, { downloads, urlTtlMs: 60_000, removalGraceMs: 1000 });
      return {
        blobs,
        cleanup() {
          blobs.close();
          client.destroy();
          return Promise.resolve();
        },
      };
    },
  },
];

function bytes(n: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return out;
}

function streamOf(data: Uint8Array<ArrayBuffer>, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(c) {
      if (offset >= data.length) return c.close();
      c.enqueue(data.slice(offset, offset += chunk));
    },
  });
}

async function sha256Hex(data: Uint8Array<ArrayBuffer>): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", data))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

for (const store of stores) {
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test({
      name: `blob contract (${store.name}): ${name}`,
      ignore: store.ignore,
      sanitizeResources: false,
      sanitizeOps: false,
      fn,
    });

  test("ingest computes the digests on the way, responds with Range, ETag, 304 and 416", async () => {
    const s = await store.open();
    try {
      // 20 MiB: several parts of a multipart upload on S3.
      const data = bytes(20 * 1024 * 1024 + 17);
      const blob = await s.blobs.ingest(streamOf(data), { maxBytes: 1 << 30 });
      assertEquals(blob.sha256, await sha256Hex(data));
      assertEquals(blob.size, data.length);
      assertEquals(Object.keys(blob.digests).sort(), ["md5", "sha1", "sha256", "sha384", "sha512"]);
      assert(await s.blobs.has(blob.sha256));
      const full = await s.blobs.respond(blob.sha256, new Request("http://x/"));
      assertEquals(full.status, 200);
      assertEquals(full.headers.get("ETag"), `"${blob.sha256}"`);
      assertEquals(await sha256Hex(new Uint8Array(await full.arrayBuffer())), blob.sha256);
      const part = await s.blobs.respond(
        blob.sha256,
        new Request("http://x/", { headers: { Range: "bytes=10-19" } }),
      );
      assertEquals(part.status, 206);
      assertEquals(part.headers.get("Content-Range"), `bytes 10-19/${data.length}`);
      assertEquals(new Uint8Array(await part.arrayBuffer()), data.slice(10, 20));
      const cached = await s.blobs.respond(
        blob.sha256,
        new Request("http://x/", { headers: { "If-None-Match": `"${blob.sha256}"` } }),
      );
      assertEquals(cached.status, 304);
      const beyond = await s.blobs.respond(
        blob.sha256,
        new Request("http://x/", { headers: { Range: `bytes=${data.length}-` } }),
      );
      assertEquals(beyond.status, 416);
      // The same content again: same name, still one object.
      const again = await s.blobs.ingest(streamOf(data), { maxBytes: 1 << 30, digests: ["sha256"] });
      assertEquals(again.sha256, blob.sha256);
    } finally {
      await s.cleanup();
    }
  });

  test("too large → 413 and a wrong checksum → 422, nothing kept; orphans removed", async () => {
    const s = await store.open();
    try {
      const data = bytes(3 * 1024 * 1024, 5);
      await assertRejects(
        () => s.blobs.ingest(streamOf(data), { maxBytes: 1024 * 1024 }),
        (e) => e instanceof BlobTooLargeError && e.maxBytes === 1024 * 1024,
      );
      await assertRejects(
        () => s.blobs.ingest(streamOf(data), { maxBytes: 1 << 30, expect: { algorithm: "md5", hex: "00" } }),
        (e) =>
          e instanceof DigestMismatchError && e.algorithm === "md5" &&
          e.actualHex === createHash("md5").update(data).digest("hex"),
      );
      assertEquals(await s.blobs.has(await sha256Hex(data)), false);
      const blob = await s.blobs.ingest(streamOf(data), { maxBytes: 1 << 30 });
      const empty = await s.blobs.ingest(streamOf(new Uint8Array(0)), { maxBytes: 10 });
      assertEquals(empty.size, 0);
      // S3 never removes a blob modified within its removal grace (here 1 s), and object stores report
      // modification times in whole seconds (Swift rounds up): let both blobs age.
      await new Promise((r) => setTimeout(r, 2100));
      assertEquals(await s.blobs.removeOrphans([blob.sha256], { has: (n) => n === empty.sha256 }), 1);
      assertEquals(await s.blobs.has(blob.sha256), false);
      assertEquals(await s.blobs.collectOrphans({ has: () => false }, 0) >= 1, true);
      assertEquals(await s.blobs.has(empty.sha256), false);
      await assertRejects(
        () => s.blobs.respond(blob.sha256, new Request("http://x/")),
        (e) => e instanceof BlobNotFoundError && e.sha256 === blob.sha256,
      );
    } finally {
      await s.cleanup();
    }
  });
}

Deno.test({
  name: "blob contract (s3): redirect downloads answer 302 to a presigned URL that serves the bytes",
  ignore: swiftSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const s = await stores[1]!.open("redirect");
    try {
      const data = bytes(100_000, 9);
      const blob = await s.blobs.ingest(streamOf(data), { maxBytes: 1 << 30 });
      const r = await s.blobs.respond(blob.sha256, new Request("http://x/"), {}, { redirect: true });
      assertEquals(r.status, 302);
      assertEquals(r.headers.get("Cache-Control"), "private, no-store");
      const got = await fetch(r.headers.get("Location")!);
      assertEquals(got.status, 200);
      assertEquals(await sha256Hex(new Uint8Array(await got.arrayBuffer())), blob.sha256);
      // A HEAD is answered directly: the presigned URL is signed for GET, and the store refuses a HEAD to it.
      const head = await s.blobs.respond(blob.sha256, new Request("http://x/", { method: "HEAD" }), {}, {
        redirect: true,
      });
      assertEquals([head.status, head.headers.get("Content-Length")], [200, String(data.length)]);
      assertEquals(head.headers.get("ETag"), `"${blob.sha256}"`);
      assertEquals(
        (await fetch(r.headers.get("Location")!, { method: "HEAD" }).then((h) => h.status)) >= 400,
        true,
      );
      // Internal reads (no redirect asked) still stream the bytes.
      assertEquals((await s.blobs.respond(blob.sha256, new Request("http://x/"))).status, 200);
    } finally {
      await s.cleanup();
    }
  },
});

Deno.test({
  name: "blob contract (s3): the test server stops",
  ignore: swiftSkipReason !== undefined,
  sanitizeResources: false,
  async fn() {
    await swift?.stop();
  },
});
