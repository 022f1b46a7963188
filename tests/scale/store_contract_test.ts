// The store contract (documents, log, counters, locks) on both backends: the embedded data directory and
// PostgreSQL (a real server from tests/fixtures/postgres.ts; skipped with the reason when it is missing).

import { assertEquals, assertRejects } from "../helpers/assert.ts";
import { DataDir, VersionConflictError } from "../../lib/store/mod.ts";
import { type PostgresServer, postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";

const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

interface Backend {
  name: string;
  /** A fresh store location; open() may be called again on it (a restart, or a second node). */
  fresh(): Promise<{ open(): Promise<DataDir>; cleanup(): Promise<void> }>;
}

let pg: PostgresServer | undefined;

const fileBackend: Backend = {
  name: "file",
  async fresh() {
    const dir = await Deno.makeTempDir({ prefix: "wharf-contract-" });
    return {
      open: () => DataDir.open(dir, { checkpointMs: 60_000 }),
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
  },
};

const postgresBackend: Backend = {
  name: "postgres",
  async fresh() {
    pg ??= await startPostgres();
    const url = await pg.createDatabase();
    const dirs: string[] = [];
    return {
      async open() {
        // Every node has its own data dir (blobs, outbox); the database is shared.
        const dir = await Deno.makeTempDir({ prefix: "wharf-contract-pg-" });
        dirs.push(dir);
        return await DataDir.open(dir, { checkpointMs: 60_000, databaseUrl: url, rootKey });
      },
      async cleanup() {
        for (const d of dirs) await Deno.remove(d, { recursive: true });
      },
    };
  },
};

const backends: Array<{ backend: Backend; ignore: boolean }> = [
  { backend: fileBackend, ignore: false },
  { backend: postgresBackend, ignore: postgresSkipReason !== undefined },
];
if (postgresSkipReason) console.warn(`store contract on PostgreSQL skipped: ${postgresSkipReason}`);

async function collect(data: DataDir, from: number): Promise<number[]> {
  const out: number[] = [];
  for await (const { index, line } of data.log.read(from)) {
    assertEquals(JSON.parse(line).Index, index);
    out.push(index);
  }
  return out;
}

for (const { backend, ignore } of backends) {
  const test = (name: string, fn: (at: Awaited<ReturnType<Backend["fresh"]>>) => Promise<void>) =>
    Deno.test({
      name: `store contract (${backend.name}): ${name}`,
      ignore,
      sanitizeResources: false,
      sanitizeOps: false,
      async fn() {
        const at = await backend.fresh();
        try {
          await fn(at);
        } finally {
          await at.cleanup();
        }
      },
    });

  test("put, get, compare-and-set, delete, and the same state after a restart", async (at) => {
    let data = await at.open();
    const a = await data.store.put("test/items", "a", { n: 1 }, { ifVersion: 0 });
    assertEquals(a.version, 1);
    await assertRejects(
      () => data.store.put("test/items", "a", { n: 2 }, { ifVersion: 0 }),
      (e) => e instanceof VersionConflictError && e.current === 1,
    );
    await data.store.put("test/items", "a", { n: 2 }, { ifVersion: 1 });
    await data.store.put("test/items", "b", { n: 3, id: "odd/ü" });
    await data.store.put("test/items", "gone", { n: 4 });
    assertEquals(await data.store.delete("test/items", "gone"), true);
    const last = data.log.lastIndex;
    await data.close({ checkpoint: false });
    data = await at.open();
    assertEquals(data.log.lastIndex, last);
    assertEquals(data.store.get("test/items", "a")?.doc, { n: 2 });
    assertEquals(data.store.get("test/items", "a")?.version, 2);
    assertEquals(data.store.get("test/items", "b")?.doc, { n: 3, id: "odd/ü" });
    assertEquals(data.store.get("test/items", "gone"), undefined);
    // After a checkpoint, a restart loads the checkpoint and replays nothing twice.
    await data.store.checkpoint();
    await data.store.put("test/items", "c", { n: 5 });
    await data.close({ checkpoint: false });
    data = await at.open();
    assertEquals([...data.store.list("test/items")].map((d) => d.id).sort(), ["a", "b", "c"]);
    await data.close();
  });

  test("lock keys may hold any character, NUL included (an OIDC identity joins issuer and subject with it)", async (at) => {
    const data = await at.open();
    try {
      const key = "auth/identity/m\u0000https://issuer.example\u0000subject";
      const { result } = await data.store.transact([key, "plain"], () => ({
        writes: [{ collection: "test/items", id: "nul", doc: { key } }],
        result: "committed",
      }), { sharedLocks: [`${key}\u0000shared`] });
      assertEquals(result, "committed");
      assertEquals(data.store.get("test/items", "nul")?.doc, { key });
    } finally {
      await data.close();
    }
  });

  test("the log: strictly increasing indexes, events in order, read from any index, subscribers", async (at) => {
    const data = await at.open();
    const seen: number[] = [];
    const unsubscribe = data.log.subscribe((b) => seen.push(b.index));
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        data.store.transact([`test/items/e${i % 3}`], () => ({
          events: [{ Topic: "Test", Type: "T", Key: `k${i}`, Payload: { i } }],
        }))),
    );
    const indexes = results.map((r) => r.index).sort((x, y) => x - y);
    assertEquals(new Set(indexes).size, 30);
    assertEquals(indexes[29]! - indexes[0]! + 1, 30, "no gaps");
    assertEquals(await collect(data, indexes[0]!), indexes);
    assertEquals(await collect(data, indexes[10]!), indexes.slice(10));
    assertEquals(seen, indexes);
    for await (const { line } of data.log.read(indexes[0]!)) {
      const record = JSON.parse(line);
      assertEquals(record.Events[0].Index, record.Index);
    }
    unsubscribe();
    await data.close();
  });

  test("locks: concurrent compare-and-set writers — exactly one wins each round", async (at) => {
    const data = await at.open();
    await data.store.put("test/items", "x", { n: 0 });
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => data.store.put("test/items", "x", { n: i + 1 }, { ifVersion: 1 })),
    );
    assertEquals(attempts.filter((r) => r.status === "fulfilled").length, 1);
    assertEquals(data.store.get("test/items", "x")?.version, 2);
    // A plan under a uniqueness lock reads fresh state: of 10 creators of one name, one creates it.
    const created = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        data.store.transact(["test/names/n1"], () => {
          if (data.store.get("test/items", "n1")) throw new Error("taken");
          return { writes: [{ collection: "test/items", id: "n1", doc: { at: Date.now() } }] };
        })),
    );
    assertEquals(created.filter((r) => r.status === "fulfilled").length, 1);
    await data.close();
  });

  test("usage counters: add, set, delete, flushed and read back after a restart", async (at) => {
    let data = await at.open();
    const c = await data.counters("test-counters");
    c.add("a");
    c.add("a", 4);
    c.set("t", 1234);
    c.add("gone");
    c.delete("gone");
    assertEquals(c.get("a"), 5);
    await c.flush();
    c.add("a");
    await data.close();
    data = await at.open();
    const again = await data.counters("test-counters");
    assertEquals([again.get("a"), again.get("t"), again.get("gone")], [6, 1234, 0]);
    await data.close();
  });
}

Deno.test({
  name: "store contract (postgres): two nodes on one database see each other's writes and one order",
  ignore: postgresSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const at = await postgresBackend.fresh();
    try {
      const one = await at.open();
      const two = await at.open();
      await one.store.put("test/items", "from-one", { n: 1 });
      // Read-your-writes on the writer; the other node sees it once its tail catches up (NOTIFY wakes it).
      assertEquals(one.store.get("test/items", "from-one")?.doc, { n: 1 });
      const deadline = Date.now() + 5000;
      while (!two.store.get("test/items", "from-one") && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assertEquals(two.store.get("test/items", "from-one")?.doc, { n: 1 });
      // Writers racing on both nodes: one winner per name, and a write after a lock sees the other node's.
      const race = await Promise.allSettled(
        [one, two, one, two].map((node) =>
          node.store.transact(["test/names/shared"], () => {
            if (node.store.get("test/items", "shared")) throw new Error("taken");
            return { writes: [{ collection: "test/items", id: "shared", doc: { by: node.path } }] };
          })
        ),
      );
      assertEquals(race.filter((r) => r.status === "fulfilled").length, 1);
      const cas = await Promise.allSettled(
        [one, two].map((node) => node.store.put("test/items", "from-one", { n: 2 }, { ifVersion: 1 })),
      );
      assertEquals(cas.filter((r) => r.status === "fulfilled").length, 1);
      // Events committed on both nodes: the same strictly increasing sequence on each.
      await Promise.all(Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? one : two).store.transact([], () => ({
          events: [{ Topic: "Test", Type: "T", Key: `k${i}`, Payload: { i } }],
        }))));
      const last = Math.max(one.log.lastIndex, two.log.lastIndex);
      while ((one.log.lastIndex < last || two.log.lastIndex < last) && Date.now() < deadline + 5000) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const a = await collect(one, 1);
      const b = await collect(two, 1);
      assertEquals(a, b);
      assertEquals(a, Array.from({ length: a.length }, (_, i) => i + 1));
      assertEquals(a.length, 43);
      await one.close();
      await two.close();
    } finally {
      await at.cleanup();
    }
  },
});

Deno.test({
  name: "store contract (postgres): the test server stops",
  ignore: postgresSkipReason !== undefined,
  sanitizeResources: false,
  async fn() {
    await pg?.stop();
  },
});
