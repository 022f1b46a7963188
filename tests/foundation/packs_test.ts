// Packed checkpoints (lib/store/file/packs.ts): one file per checkpoint for a packed collection, compaction into a
// base, migration from per-document files, and recovery from what a crash between steps leaves behind.

import { assert, assertEquals } from "../helpers/assert.ts";
import { withTempDir } from "../helpers/files.ts";
import { EventLog } from "../../lib/store/file/eventlog.ts";
import { DocumentStore } from "../../lib/store/documents.ts";

const packed = "test/packed";

async function openStore(dir: string, packedCollections: string[] = [packed]) {
  const log = await EventLog.open(`${dir}/events`);
  const store = await DocumentStore.open(dir, log, { packed: packedCollections });
  return { log, store };
}

/** Every document of the collection as [id, version, doc], sorted by id. */
function snapshot(store: DocumentStore, collection = packed) {
  return [...store.list(collection)].map((d) => [d.id, d.version, d.doc] as const)
    .sort((a, b) => a[0] < b[0] ? -1 : 1);
}

function files(dir: string, collection = packed): string[] {
  return [...Deno.readDirSync(`${dir}/${collection}`)].map((e) => e.name).sort();
}

/** Reopens the store from its checkpoint files alone: the log is emptied past the checkpoint first. */
async function reopenFromFiles(dir: string, packedCollections?: string[]) {
  const manifest = JSON.parse(Deno.readTextFileSync(`${dir}/manifest.json`));
  const opened = await openStore(dir, packedCollections);
  assertEquals(opened.store.checkpointIndex, manifest.checkpointIndex);
  assertEquals(opened.log.lastIndex, manifest.checkpointIndex, "nothing left to replay");
  return opened;
}

Deno.test("packs: a checkpoint writes one file for all changed documents and restart restores them", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    for (let i = 0; i < 50; i++) await store.put(packed, `t${i}`, { i });
    for (let i = 0; i < 5; i++) await store.delete(packed, `t${i}`);
    for (let i = 10; i < 13; i++) await store.put(packed, `t${i}`, { i, updated: true });
    await store.checkpoint();
    assertEquals(files(dir).length, 1, `one pack, no per-document files: ${files(dir)}`);
    assert(/^delta-\d{16}\.ndjson$/.test(files(dir)[0]!), files(dir)[0]);
    const before = snapshot(store);
    assertEquals(before.length, 45);
    await log.close();
    ({ log, store } = await reopenFromFiles(dir));
    assertEquals(snapshot(store), before);
    // Across several checkpoints: a delete in one, a re-create of the same id in the next.
    await store.delete(packed, "t20");
    await store.checkpoint();
    await store.put(packed, "t20", { again: true });
    await store.delete(packed, "t21");
    await store.checkpoint();
    const after = snapshot(store);
    assertEquals(files(dir).length, 3);
    await log.close();
    ({ log, store } = await reopenFromFiles(dir));
    assertEquals(snapshot(store), after);
    assertEquals(store.get(packed, "t20")?.doc, { again: true });
    assertEquals(store.get(packed, "t21"), undefined);
    await log.close();
  }));

Deno.test("packs: deltas that outweigh the base are compacted into a new base and the old files go", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    const filler = "x".repeat(4096);
    for (let round = 0; round < 80; round++) {
      await store.put(packed, `r${round}`, { filler, round });
      if (round % 3 === 0) await store.delete(packed, `r${round - 1}`);
      await store.checkpoint();
    }
    const names = files(dir);
    assertEquals(names.filter((n) => n.startsWith("base-")).length, 1, `one base: ${names}`);
    assert(names.length < 80, `deltas were folded into the base: ${names.length} files`);
    const expected = snapshot(store);
    await log.close();
    ({ log, store } = await reopenFromFiles(dir));
    assertEquals(snapshot(store), expected);
    await log.close();
  }));

Deno.test("packs: per-document files of a collection that becomes packed keep their state and deletions", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir, []);
    for (const id of ["a", "b", "c"]) await store.put(packed, id, { id });
    await store.checkpoint();
    assertEquals(files(dir), ["a.json", "b.json", "c.json"]);
    await log.close();
    ({ log, store } = await openStore(dir));
    await store.delete(packed, "b");
    await store.put(packed, "c", { id: "c", v: 2 });
    await store.checkpoint();
    await log.close();
    // Not configured as packed any more: the packs on disk keep it packed, so "b" stays deleted.
    ({ log, store } = await reopenFromFiles(dir, []));
    assertEquals(snapshot(store), [["a", 1, { id: "a" }], ["c", 2, { id: "c", v: 2 }]]);
    // A compaction writes a base with every live document and removes the per-document files.
    const filler = "y".repeat(64 * 1024);
    for (let i = 0; i < 6; i++) {
      await store.put(packed, `big${i}`, { filler });
      await store.checkpoint();
    }
    assert(!files(dir).some((n) => n.endsWith(".json")), `per-document files left: ${files(dir)}`);
    const expected = snapshot(store);
    assertEquals(expected.length, 8);
    await log.close();
    ({ log, store } = await reopenFromFiles(dir));
    assertEquals(snapshot(store), expected);
    await log.close();
  }));

Deno.test("packs: files a crash left beside a newer base (old deltas, per-document files) are ignored", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    const filler = "z".repeat(128 * 1024);
    for (let i = 0; i < 4; i++) {
      await store.put(packed, `k${i}`, { filler, i });
      await store.checkpoint();
    }
    await store.delete(packed, "k0");
    await store.put(packed, "k1", { v: "current" });
    for (let i = 4; i < 8; i++) {
      await store.put(packed, `k${i}`, { filler, i });
      await store.checkpoint();
    }
    const base = files(dir).find((n) => n.startsWith("base-"));
    assert(base, `a base was written: ${files(dir)}`);
    const expected = snapshot(store);
    await log.close();
    // What a crash after the base's rename but before the removals would leave: stale copies, older names.
    const stale = JSON.stringify({ id: "k0", version: 1, index: 1, doc: { stale: true } });
    Deno.writeTextFileSync(`${dir}/${packed}/delta-0000000000000001.ndjson`, stale + "\n");
    Deno.writeTextFileSync(`${dir}/${packed}/base-0000000000000001.ndjson`, stale + "\n");
    Deno.writeTextFileSync(`${dir}/${packed}/k0.json`, stale);
    Deno.writeTextFileSync(`${dir}/${packed}/k1.json`, stale.replace('"k0"', '"k1"'));
    ({ log, store } = await reopenFromFiles(dir));
    assertEquals(snapshot(store), expected);
    assertEquals(store.get(packed, "k0"), undefined);
    assertEquals(store.get(packed, "k1")?.doc, { v: "current" });
    await log.close();
  }));

Deno.test("packs: a packed collection's changes after the checkpoint come back from the log", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    await store.put(packed, "kept", { n: 1 });
    await store.put(packed, "dropped", { n: 1 });
    await store.checkpoint();
    await store.delete(packed, "dropped");
    await store.put(packed, "kept", { n: 2 });
    await store.put(packed, "new", { n: 3 });
    await log.close(); // no checkpoint: these three exist only in the log
    ({ log, store } = await openStore(dir));
    assertEquals(snapshot(store), [["kept", 2, { n: 2 }], ["new", 1, { n: 3 }]]);
    await log.close();
  }));

Deno.test("packs: files a compaction replaced still go at the next compaction when its checkpoint failed", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    const filler = "f".repeat(300 * 1024);
    await store.put(packed, "a", { filler });
    await store.checkpoint(); // one delta, heavier than the (absent) base: the next checkpoint compacts
    await store.put(packed, "b", { n: 1 });
    await store.put("test/plain", "x", { n: 1 });
    // The compaction's base is written, then a per-document write fails (a folder where its file goes).
    Deno.mkdirSync(`${dir}/test/plain/x.json/blocker`, { recursive: true });
    let failed = false;
    await store.checkpoint().catch(() => (failed = true));
    assert(failed, "the checkpoint failed");
    Deno.removeSync(`${dir}/test/plain/x.json`, { recursive: true });
    await store.checkpoint();
    // The next compaction removes the delta the first base replaced.
    await store.put(packed, "c", { filler });
    await store.checkpoint();
    await store.put(packed, "d", { n: 1 });
    await store.checkpoint();
    const names = files(dir);
    assertEquals(names.filter((n) => n.startsWith("base-")).length, 1, `one base: ${names}`);
    assertEquals(names.filter((n) => n.startsWith("delta-")).length, 0, `no delta left: ${names}`);
    await log.close();
  }));
