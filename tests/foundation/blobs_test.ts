// The file blob store (lib/store/file/blobs.ts) on a temp dir: digests while ingesting, refused uploads leave nothing,
// Range/HEAD/416 answers, and the orphan collection's grace period.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { withTempDir } from "../helpers/files.ts";
import { BlobStore } from "../../lib/store/file/blobs.ts";
import { parseRange } from "../../lib/store/blob_http.ts";
import { BlobTooLargeError, DigestMismatchError } from "../../lib/store/errors.ts";
import { chunkedStream } from "../helpers/streams.ts";

function streamOf(bytes: Uint8Array, chunk = 1000): ReadableStream<Uint8Array> {
  return chunkedStream(bytes, chunk);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.isDirectory) out.push(...filesUnder(`${dir}/${e.name}`));
    else out.push(`${dir}/${e.name}`);
  }
  return out;
}

const data = new TextEncoder().encode("wharf blob ".repeat(1000));

Deno.test("blobs: ingest computes every digest incrementally and stores by sha256", () =>
  withTempDir(async (dir) => {
    const blobs = await BlobStore.open(dir);
    const stored = await blobs.ingest(streamOf(data), { maxBytes: 1 << 20 });
    for (const algo of ["md5", "sha1", "sha256", "sha384", "sha512"] as const) {
      assertEquals(stored.digests[algo], createHash(algo).update(data).digest("hex"));
    }
    assertEquals(stored.size, data.length);
    assert(await blobs.has(stored.sha256));
    assertEquals(filesUnder(`${dir}/tmp`), []);
  }));

Deno.test("blobs: an upload over the cap or with a wrong checksum leaves nothing behind", () =>
  withTempDir(async (dir) => {
    const blobs = await BlobStore.open(dir);
    await assertRejects(
      () => blobs.ingest(streamOf(data), { maxBytes: 100 }),
      (e) => e instanceof BlobTooLargeError && e.maxBytes === 100,
    );
    await assertRejects(
      () =>
        blobs.ingest(streamOf(data), {
          maxBytes: 1 << 20,
          expect: { algorithm: "sha1", hex: "00".repeat(20) },
        }),
      (e) =>
        e instanceof DigestMismatchError && e.algorithm === "sha1" &&
        e.actualHex === createHash("sha1").update(data).digest("hex"),
    );
    assertEquals(filesUnder(dir), []);
    const ok = await blobs.ingest(streamOf(data), {
      maxBytes: 1 << 20,
      expect: { algorithm: "sha1", hex: createHash("sha1").update(data).digest("hex").toUpperCase() },
    });
    assert(await blobs.has(ok.sha256));
  }));

Deno.test("blobs: respond streams the whole body, a Range as 206, HEAD without body, 416 past the end", () =>
  withTempDir(async (dir) => {
    const blobs = await BlobStore.open(dir);
    const { sha256 } = await blobs.ingest(streamOf(data), { maxBytes: 1 << 20 });
    const whole = await blobs.respond(sha256, new Request("http://x/"));
    assertEquals(whole.status, 200);
    assertEquals(whole.headers.get("Content-Length"), String(data.length));
    assertEquals(whole.headers.get("ETag"), `"${sha256}"`);
    assertEquals(new Uint8Array(await whole.arrayBuffer()), data);
    const part = await blobs.respond(sha256, new Request("http://x/", { headers: { Range: "bytes=10-19" } }));
    assertEquals(part.status, 206);
    assertEquals(part.headers.get("Content-Range"), `bytes 10-19/${data.length}`);
    assertEquals(new Uint8Array(await part.arrayBuffer()), data.slice(10, 20));
    const rest = await blobs.respond(sha256, new Request("http://x/", { headers: { Range: "bytes=10-" } }));
    assertEquals([rest.status, rest.headers.get("Content-Length")], [206, String(data.length - 10)]);
    assertEquals(new Uint8Array(await rest.arrayBuffer()), data.slice(10));
    const head = await blobs.respond(sha256, new Request("http://x/", { method: "HEAD" }));
    assertEquals([head.status, head.body], [200, null]);
    const past = await blobs.respond(
      sha256,
      new Request("http://x/", { headers: { Range: "bytes=999999-" } }),
    );
    assertEquals(past.status, 416);
    const cached = await blobs.respond(
      sha256,
      new Request("http://x/", { headers: { "If-None-Match": `"${sha256}"` } }),
    );
    assertEquals(cached.status, 304);
  }));

Deno.test("blobs: parseRange handles suffix, open-ended and invalid ranges", () => {
  assertEquals(parseRange("bytes=-10", 100), [90, 99]);
  assertEquals(parseRange("bytes=95-", 100), [95, 99]);
  assertEquals(parseRange("bytes=0-1000", 100), [0, 99]);
  assertEquals(parseRange("bytes=50-10", 100), "unsatisfiable");
  assertEquals(parseRange("items=0-1", 100), undefined);
  assertEquals(parseRange("bytes=0-1", 100, '"other"', "etag"), undefined);
});

Deno.test("blobs: orphan collection removes only unreferenced blobs past the grace period", () =>
  withTempDir(async (dir) => {
    const blobs = await BlobStore.open(dir);
    const keep = await blobs.ingest(streamOf(data), { maxBytes: 1 << 20 });
    const drop = await blobs.ingest(streamOf(data.slice(5)), { maxBytes: 1 << 20 });
    assertEquals(await blobs.collectOrphans(new Set([keep.sha256]), 60_000), 0, "young blobs are kept");
    assertEquals(await blobs.collectOrphans(new Set([keep.sha256]), 0), 1);
    assert(await blobs.has(keep.sha256));
    assertEquals(await blobs.has(drop.sha256), false);
  }));
