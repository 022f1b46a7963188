// The document store (lib/store/documents.ts over the file event log) on a temp dir: compare-and-set, transactions,
// restart through checkpoints and replay, atomic checkpoint files, hostile ids as file names.

import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { withTempDir } from "../helpers/files.ts";
import { EventLog } from "../../lib/store/file/eventlog.ts";
import {
  DocumentStore,
  fileNameForId,
  idForFileName,
  VersionConflictError,
} from "../../lib/store/documents.ts";

async function openStore(dir: string) {
  const log = await EventLog.open(`${dir}/events`);
  const store = await DocumentStore.open(dir, log);
  return { log, store };
}

Deno.test("documents: put, get, list and delete with compare-and-set on version", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    const a = await store.put("test/items", "a", { n: 1 }, { ifVersion: 0 });
    assertEquals(a.version, 1);
    await assertRejects(
      () => store.put("test/items", "a", { n: 2 }, { ifVersion: 0 }),
      (e) => e instanceof VersionConflictError && e.current === 1,
    );
    const a2 = await store.put("test/items", "a", { n: 2 }, { ifVersion: 1 });
    assertEquals([a2.version, a2.doc], [2, { n: 2 }]);
    await assertRejects(
      () => store.delete("test/items", "a", { ifVersion: 1 }),
      (e) => e instanceof VersionConflictError,
    );
    assertEquals(store.get("test/items", "a")?.doc, { n: 2 }, "a failed CAS leaves the document unchanged");
    await store.put("test/items", "b", { n: 3 });
    assertEquals([...store.list("test/items")].map((d) => d.id), ["a", "b"]);
    assertEquals(await store.delete("test/items", "a", { ifVersion: 2 }), true);
    assertEquals(store.get("test/items", "a"), undefined);
    await log.close();
  }));

Deno.test("documents: concurrent CAS writers on one document — exactly one wins each round", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    await store.put("test/items", "x", { n: 0 });
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => store.put("test/items", "x", { n: i + 1 }, { ifVersion: 1 })),
    );
    assertEquals(attempts.filter((r) => r.status === "fulfilled").length, 1);
    assertEquals(store.get("test/items", "x")?.version, 2);
    await log.close();
  }));

Deno.test("documents: transact commits writes and events in one batch with the commit's index", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    const { index, result } = await store.transact(["k"], () => (i: number) => ({
      writes: [{ collection: "test/items", id: "p", doc: { createIndex: i } }],
      events: [{ Topic: "Test", Type: "Made", Key: "p", Payload: { Item: { id: "p" } } }],
      result: "done",
    }));
    assertEquals(result, "done");
    assertEquals(store.get("test/items", "p")?.doc, { createIndex: index });
    const lines = [];
    for await (const l of log.read(index)) lines.push(JSON.parse(l.line));
    assertEquals(lines[0].Events, [{
      Topic: "Test",
      Type: "Made",
      Key: "p",
      Namespace: "",
      FilterKeys: null,
      Index: index,
      Payload: { Item: { id: "p" } },
    }]);
    await log.close();
  }));

Deno.test("documents: a plan that throws writes nothing", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    await assertRejects(() =>
      store.transact(["k"], () => {
        throw new Error("invalid");
      })
    );
    assertEquals(log.lastIndex, 0);
    await log.close();
  }));

Deno.test("documents: state survives restart through checkpoint files and log replay", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    await store.put("test/items", "early", { v: 1 });
    await store.checkpoint();
    assertEquals(store.checkpointIndex, 1);
    await store.put("test/items", "late", { v: 2 });
    await store.put("test/items", "early", { v: 3 });
    await store.delete("test/items", "gone-never-existed");
    // No checkpoint: "late" and the update to "early" exist only in the log.
    await log.close();
    ({ log, store } = await openStore(dir));
    assertEquals(store.get("test/items", "early")?.doc, { v: 3 });
    assertEquals(store.get("test/items", "early")?.version, 2);
    assertEquals(store.get("test/items", "late")?.doc, { v: 2 });
    await store.checkpoint();
    const files = [...Deno.readDirSync(`${dir}/test/items`)].map((e) => e.name).sort();
    assertEquals(files, ["early.json", "late.json"]);
    await log.close();
  }));

Deno.test("documents: checkpoint replaces files atomically and leaves no temp files", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    for (let i = 0; i < 20; i++) await store.put("test/items", "same", { i });
    await store.checkpoint();
    const saved = JSON.parse(Deno.readTextFileSync(`${dir}/test/items/same.json`));
    assertEquals(saved.doc, { i: 19 });
    const all = [...Deno.readDirSync(`${dir}/test/items`)].map((e) => e.name);
    assert(all.every((n) => !n.endsWith(".tmp")), `temp files left: ${all}`);
    const manifest = JSON.parse(Deno.readTextFileSync(`${dir}/manifest.json`));
    assertEquals(manifest.checkpointIndex, 20);
    await log.close();
  }));

Deno.test("documents: hostile ids become safe file names inside the collection folder", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    const ids = ["../../etc/passwd", "a/b", "nul\u0000byte", ".hidden", "..", "é", "x.tmp"];
    for (const id of ids) await store.put("test/items", id, { id });
    await store.checkpoint();
    const names = [...Deno.readDirSync(`${dir}/test/items`)].map((e) => e.name);
    assertEquals(names.length, ids.length);
    for (const name of names) assert(!name.includes("/") && !name.startsWith("."), name);
    for (const id of ids) assertEquals(idForFileName(fileNameForId(id)), id);
    await log.close();
  }));

Deno.test("documents: a collection outside the known families is refused", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    await assertRejects(() => store.put("events/x", "a", {}));
    await assertRejects(() => store.put("../x", "a", {}));
    assertEquals(log.lastIndex, 0);
    await log.close();
  }));

Deno.test("documents: compare-and-set holds between transactions that do not share a lock", () =>
  withTempDir(async (dir) => {
    const { log, store } = await openStore(dir);
    await store.put("test/items", "shared", { n: 0 });
    // Different lock keys: the plans run concurrently and land in one fsync group.
    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        store.transact([`lock-${i}`], () => ({
          writes: [{ collection: "test/items", id: "shared", doc: { n: i + 1 }, ifVersion: 1 }],
        }))),
    );
    assertEquals(attempts.filter((r) => r.status === "fulfilled").length, 1);
    assertEquals(store.get("test/items", "shared")?.version, 2);
    // Unconditional writes in one group still get consecutive versions.
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        store.transact(
          [`other-${i}`],
          () => ({ writes: [{ collection: "test/items", id: "shared", doc: { m: i } }] }),
        )),
    );
    assertEquals(store.get("test/items", "shared")?.version, 7);
    await log.close();
    const reopened = await openStore(dir);
    assertEquals(reopened.store.get("test/items", "shared")?.version, 7);
    await reopened.log.close();
  }));

Deno.test("documents: leftover temp files from a crash are removed at start and never loaded", () =>
  withTempDir(async (dir) => {
    let { log, store } = await openStore(dir);
    await store.put("test/items", "kept", { v: 1 });
    await store.checkpoint();
    await log.close();
    Deno.writeTextFileSync(`${dir}/test/items/kept.json.999.1.tmp`, '{"id":"kept","version":9,"doc":{"v":9}');
    ({ log, store } = await openStore(dir));
    assertEquals(store.get("test/items", "kept")?.doc, { v: 1 });
    assertEquals([...Deno.readDirSync(`${dir}/test/items`)].map((e) => e.name), ["kept.json"]);
    await log.close();
  }));
