// Orphan collection racing an upload of the same content, in two fixed interleavings: the collection must
// never remove a blob that an upload has just placed and holds.

import { assert } from "../helpers/assert.ts";
import { BlobStore } from "../../lib/store/file/blobs.ts";

const content = new TextEncoder().encode("the same box file, uploaded twice");
const streamOf = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice());
      c.close();
    },
  });
type FsCall = (path: string | URL) => Promise<unknown>;

/**
 * Replaces Deno[name] so that its first call on a path ending in `suffix` stops at `where` ("before" or after
 * the real call) until released. Returns when it stopped, how to release it, and how to put Deno back.
 */
function pauseFsCall(name: "stat" | "remove", suffix: string, where: "before" | "after") {
  const deno = Deno as unknown as Record<string, FsCall>;
  const real = deno[name]!;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const stopped = new Promise<void>((r) => (reached = r));
  let armed = true;
  deno[name] = async (path: string | URL, ...rest: unknown[]) => {
    const hit = armed && String(path).endsWith(suffix);
    if (hit) armed = false;
    if (hit && where === "before") {
      reached();
      await gate;
    }
    const result = await (real as (...a: unknown[]) => Promise<unknown>)(path, ...rest);
    if (hit && where === "after") {
      reached();
      await gate;
    }
    return result;
  };
  return { stopped, release, restore: () => (deno[name] = real) };
}

async function withOldOrphan(fn: (blobs: BlobStore, sha256: string, held: Set<string>) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "wharf-orphan-race-" });
  try {
    const blobs = await BlobStore.open(dir);
    const orphan = await blobs.ingest(streamOf(content), { maxBytes: 1 << 20 });
    const old = new Date(Date.now() - 3_600_000);
    await Deno.utime(`${dir}/${orphan.sha256.slice(0, 2)}/${orphan.sha256}`, old, old);
    await fn(blobs, orphan.sha256, new Set());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** An upload as the registry does it: the blob held from its placing until its commit (here: kept held). */
const upload = (blobs: BlobStore, held: Set<string>) =>
  blobs.ingest(streamOf(content), { maxBytes: 1 << 20, hold: (sha256) => held.add(sha256) })
    .then((blob) => held.add(blob.sha256));

Deno.test("an upload that places and holds a blob while the collection is between its stat and its removal keeps it", () =>
  withOldOrphan(async (blobs, sha256, held) => {
    const pause = pauseFsCall("stat", sha256, "after");
    const collection = blobs.collectOrphans(held, 60_000);
    try {
      await pause.stopped; // the collection saw an old, unreferenced file
      pause.restore();
      await upload(blobs, held);
    } finally {
      pause.restore();
      pause.release();
    }
    await collection;
    assert(await blobs.has(sha256), "the blob the upload holds was removed");
  }));

Deno.test("an upload that places a blob while the collection's removal of the old one is under way keeps it", () =>
  withOldOrphan(async (blobs, sha256, held) => {
    const pause = pauseFsCall("remove", sha256, "before");
    const collection = blobs.collectOrphans(held, 60_000);
    let uploaded: Promise<unknown> | undefined;
    try {
      await pause.stopped; // the collection has decided to remove the file
      pause.restore();
      uploaded = upload(blobs, held);
      // A correct upload waits for that removal before placing its file; give a wrong one time to place it.
      await Promise.race([uploaded, new Promise((r) => setTimeout(r, 300))]);
    } finally {
      pause.restore();
      pause.release();
    }
    await collection;
    await uploaded;
    assert(await blobs.has(sha256), "the blob the upload placed was removed");
  }));
