// The shared digest pool under concurrent blob ingests: never more than its cap of worker threads, exact
// digests for every upload, failed or cancelled uploads leave nothing behind (their workers go idle and
// stop), and closing the store or the server ends every worker.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { BlobStore } from "../../lib/store/file/blobs.ts";
import { type DigestName, digestNames } from "../../lib/store/blobs.ts";
import { HashPool, livePoolWorkers } from "../../lib/store/hash_pool.ts";
import { batchBytes, ParallelDigests } from "../../lib/store/blob_stream.ts";
import { DigestMismatchError } from "../../lib/store/errors.ts";
import { createUser, startRegistry } from "../registry/helpers.ts";
import { settledUploadLeftovers } from "../helpers/stored.ts";

const MiB = 1024 * 1024;

/** Varied bytes (a cheap PRNG); uploads take different windows of it, so no two are alike. */
const pool = (() => {
  const bytes = new Uint8Array(8 * MiB);
  let x = 88172645;
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
})();

/** Upload `i`'s bytes: 2.5 to 6 MiB (several batches each, so every one goes through the pool). */
function sample(i: number): Uint8Array {
  const length = 2 * MiB + MiB / 2 + (i % 8) * (MiB / 2) + i;
  return pool.subarray(i * 65_537, i * 65_537 + length);
}

function hex(algorithm: DigestName, bytes: Uint8Array): string {
  return createHash(algorithm).update(bytes).digest("hex");
}

/** `bytes` in 256 KiB chunks; with `failAt`, the stream errors once that many bytes are out. */
function streamOf(bytes: Uint8Array, failAt = Infinity): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    async pull(c) {
      // A macrotask per chunk, like a network body: the uploads interleave instead of running one by one.
      await new Promise((r) => setTimeout(r, 0));
      if (offset >= failAt) return c.error(new Error("the client went away"));
      if (offset >= bytes.length) return c.close();
      c.enqueue(bytes.slice(offset, offset + 256 * 1024));
      offset += 256 * 1024;
    },
  });
}

/** Samples livePoolWorkers() until stopped; returns the most seen. */
function watchWorkers(): () => number {
  let most = livePoolWorkers();
  const timer = setInterval(() => (most = Math.max(most, livePoolWorkers())), 2);
  return () => {
    clearInterval(timer);
    return Math.max(most, livePoolWorkers());
  };
}

/** Waits (bounded) until `done()` holds. */
async function eventually(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
  assert(done(), `timed out waiting until ${what}`);
}

function storedBlobs(dir: string): string[] {
  const names: string[] = [];
  for (const shard of Deno.readDirSync(dir)) {
    if (shard.name === "tmp") continue;
    for (const entry of Deno.readDirSync(`${dir}/${shard.name}`)) names.push(entry.name);
  }
  return names.sort();
}

Deno.test("hash pool: 12 concurrent ingests: at most 2 workers, exact digests, nothing leaked", async () => {
  const dir = await Deno.makeTempDir();
  const blobs = await BlobStore.open(dir, { hashing: { idleMs: 200 } });
  try {
    const stopWatching = watchWorkers();
    const bodies = Array.from({ length: 12 }, (_, i) => sample(i));
    const results = await Promise.allSettled(bodies.map((body, i) => {
      if (i === 3) return blobs.ingest(streamOf(body, 2 * MiB), { maxBytes: 64 * MiB });
      if (i === 7) {
        return blobs.ingest(streamOf(body), {
          maxBytes: 64 * MiB,
          expect: { algorithm: "sha512", hex: hex("sha512", bodies[0]!) },
        });
      }
      const algorithm = digestNames[i % digestNames.length]!;
      return blobs.ingest(streamOf(body), {
        maxBytes: 64 * MiB,
        ...(i % 2 === 0 ? {} : { digests: [algorithm], expect: { algorithm, hex: hex(algorithm, body) } }),
      });
    }));
    const most = stopWatching();
    assert(most >= 1 && most <= 2, `${most} workers at once`);
    const kept: string[] = [];
    for (const [i, result] of results.entries()) {
      const body = bodies[i]!;
      if (i === 3) {
        assertEquals(result.status, "rejected", "the broken stream fails");
        continue;
      }
      if (i === 7) {
        assert(
          result.status === "rejected" && result.reason instanceof DigestMismatchError,
          "the mismatch fails",
        );
        assertEquals([result.reason.algorithm, result.reason.actualHex], ["sha512", hex("sha512", body)]);
        continue;
      }
      assert(result.status === "fulfilled", `upload ${i}: ${result.status === "rejected" && result.reason}`);
      const stored = result.value;
      assertEquals(stored.size, body.length);
      for (const [name, value] of Object.entries(stored.digests)) {
        assertEquals(value, hex(name as DigestName, body), `upload ${i} ${name}`);
      }
      assertEquals(
        Object.keys(stored.digests).length,
        i % 2 === 0 ? 5 : new Set(["sha256", digestNames[i % 5]]).size,
      );
      kept.push(stored.sha256);
    }
    assertEquals(storedBlobs(dir), kept.sort(), "only the good uploads are kept");
    assertEquals([...Deno.readDirSync(`${dir}/tmp`)], [], "no temp file left");
    // A worker stops only once none of its uploads is left: failed ones must have let go too.
    await eventually(() => blobs.hashWorkers === 0, "the idle workers stopped");
  } finally {
    blobs.close();
    await Deno.remove(dir, { recursive: true });
  }
  assertEquals(livePoolWorkers(), 0);
});

/** The sha256 of `bytes` (several batches) hashed through `hashing`. */
async function pooledSha256(hashing: HashPool, bytes: Uint8Array): Promise<string> {
  const digests = new ParallelDigests(["sha256"], hashing);
  try {
    for (let offset = 0; offset < bytes.length; offset += batchBytes) {
      const batch = digests.buffer();
      const part = bytes.subarray(offset, offset + batchBytes);
      batch.set(part);
      await digests.update(batch.subarray(0, part.length));
    }
    return (await digests.finish()).sha256!;
  } finally {
    digests.close();
  }
}

Deno.test("hash pool: one worker serves uploads in turn, and starts again after its idle stop", async () => {
  const hashing = new HashPool({ idleMs: 1000 });
  try {
    for (let i = 0; i < 3; i++) {
      assertEquals(await pooledSha256(hashing, sample(i)), hex("sha256", sample(i)));
    }
    assertEquals(hashing.workersStarted, 1, "reused, not restarted");
    await eventually(() => hashing.workerCount === 0, "the idle worker stopped");
    assertEquals(await pooledSha256(hashing, sample(9)), hex("sha256", sample(9)));
    assertEquals(hashing.workersStarted, 2);
  } finally {
    hashing.close();
  }
  // A one-batch body is hashed inline: no worker at all.
  const dir = await Deno.makeTempDir();
  const blobs = await BlobStore.open(dir);
  try {
    const inline = await blobs.ingest(streamOf(pool.subarray(0, MiB)), { maxBytes: 64 * MiB });
    assertEquals(inline.digests.md5, hex("md5", pool.subarray(0, MiB)));
    assertEquals(blobs.hashWorkers, 0);
  } finally {
    blobs.close();
    await Deno.remove(dir, { recursive: true });
  }
  assertEquals(livePoolWorkers(), 0);
});

Deno.test("hash pool: many uploads at once hold a few batches each, not a full window each", async () => {
  const hashing = new HashPool({ maxQueuedBatches: 4 });
  try {
    const uploads = 6;
    const batches = 12;
    let mostQueued = 0;
    const digests = await Promise.all(Array.from({ length: uploads }, async (_, u) => {
      const digests = new ParallelDigests(["sha256"], hashing);
      const expected = createHash("sha256");
      try {
        for (let b = 0; b < batches; b++) {
          const batch = digests.buffer();
          batch.set(pool.subarray(u * 1000 + b * 7, u * 1000 + b * 7 + batchBytes));
          expected.update(batch);
          await digests.update(batch);
          mostQueued = Math.max(mostQueued, hashing.queuedBatches);
        }
        return [(await digests.finish()).sha256, expected.digest("hex")];
      } finally {
        digests.close();
      }
    }));
    for (const [actual, expected] of digests) assertEquals(actual, expected);
    // Each upload may keep one batch out whatever the pool holds; unbounded it would be 9 each (54).
    assert(mostQueued <= 4 + 2 * uploads, `${mostQueued} batches out at once`);
    assertEquals(hashing.queuedBatches, 0);
  } finally {
    hashing.close();
  }
  assertEquals(livePoolWorkers(), 0);
});

Deno.test("hash pool: closing the store fails an upload still hashing and stops its worker", async () => {
  const dir = await Deno.makeTempDir();
  const blobs = await BlobStore.open(dir);
  try {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const body = sample(5);
    let offset = 0;
    const stalling = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (offset >= 3 * MiB) await held;
        if (offset >= body.length) return c.close();
        c.enqueue(body.slice(offset, offset + MiB));
        offset += MiB;
      },
    });
    const ingest = blobs.ingest(stalling, { maxBytes: 64 * MiB });
    await eventually(() => blobs.hashWorkers === 1, "the upload reached the pool");
    blobs.close();
    assertEquals(blobs.hashWorkers, 0);
    release();
    await assertRejects(() => ingest);
    assertEquals([...Deno.readDirSync(`${dir}/tmp`)], []);
  } finally {
    blobs.close();
    await Deno.remove(dir, { recursive: true });
  }
  assertEquals(livePoolWorkers(), 0);
});

Deno.test("hash pool: 12 concurrent HTTP uploads use 2 workers at most, none after shutdown", async () => {
  const f = await startRegistry();
  try {
    const alice = await createUser(f, "alice");
    await f.api.post("/api/v1/boxes", { name: "many", is_private: false }, { token: alice });
    const bodies = Array.from({ length: 12 }, (_, i) => sample(i));
    const types: DigestName[] = ["md5", "sha1", "sha256", "sha384", "sha512"];
    const uploadPaths: string[] = [];
    for (const [i, body] of bodies.entries()) {
      const V = `/api/v1/box/alice/many/version/1.0.${i}`;
      await f.api.post("/api/v1/box/alice/many/versions", { version: { version: `1.0.${i}` } }, {
        token: alice,
      });
      // Even uploads declare a checksum: the right one, except upload 4 (a wrong one).
      const type = types[i % types.length]!;
      const checksum = i % 2 === 1
        ? {}
        : { checksum: hex(type, i === 4 ? bodies[0]! : body), checksum_type: type };
      const p = await f.api.post(`${V}/providers`, { provider: { name: "virtualbox", ...checksum } }, {
        token: alice,
      });
      assertEquals(p.status, 200, p.text);
      const prepared = await f.api.get(`${V}/provider/virtualbox/upload`, { token: alice });
      assertEquals(prepared.status, 200, prepared.text);
      uploadPaths.push(prepared.body.upload_path);
    }
    const stopWatching = watchWorkers();
    const answers = await Promise.allSettled(bodies.map(async (body, i) => {
      const r = await fetch(uploadPaths[i]!, {
        method: "PUT",
        body: streamOf(body, i === 9 ? 2 * MiB : Infinity),
      });
      return { status: r.status, text: await r.text() };
    }));
    const most = stopWatching();
    assert(most >= 1 && most <= 2, `${most} workers at once`);
    for (const [i, answer] of answers.entries()) {
      if (i === 9) {
        assertEquals(answer.status, "rejected", "the client's broken body fails its fetch");
      } else if (i === 4) {
        assert(answer.status === "fulfilled");
        assertEquals(answer.value.status, 422, answer.value.text);
      } else {
        assert(answer.status === "fulfilled", `upload ${i}`);
        assertEquals(answer.value.status, 200, answer.value.text);
      }
      const V = `/api/v1/box/alice/many/version/1.0.${i}`;
      const provider = await f.api.get(`${V}/provider/virtualbox`, { token: alice });
      const hosted = i !== 9 && i !== 4;
      assertEquals(provider.body.hosted, hosted, `upload ${i} hosted`);
      if (!hosted) continue;
      assertEquals((await f.api.put(`${V}/release`, undefined, { token: alice })).status, 200);
      const download = await fetch(
        `${f.srv.url}/alice/boxes/many/versions/1.0.${i}/providers/virtualbox.box`,
      );
      assertEquals(download.status, 200, `download ${i}`);
      const bytes = new Uint8Array(await download.arrayBuffer());
      assertEquals(hex("sha256", bytes), hex("sha256", bodies[i]!), `download ${i}`);
    }
    // Asked of the storage itself (the data dir or the bucket, whichever WHARF_TEST_STORAGE chose).
    assertEquals(await settledUploadLeftovers(f.srv), [], "no temp file is left");
    const kept = await Promise.all(bodies.map((b) => f.srv.server.data.blobs.has(hex("sha256", b))));
    assertEquals(kept.filter(Boolean).length, 10, "the mismatched and broken uploads left no blob");
    assert(livePoolWorkers() <= 2);
  } finally {
    await f.stop();
  }
  assertEquals(livePoolWorkers(), 0, "shutdown stops the pool");
});
