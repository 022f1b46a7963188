// Catching a node's view up before a request (lib/store/postgres/view_sync.ts): every caller waits for a head
// read sent after it arrived, no caller waits longer than the bound even when the database never answers, and
// on a real PostgreSQL a request's head read neither queues behind nor cuts off a long read of the log table.

import { assert, assertEquals } from "../helpers/assert.ts";
import { ViewSync } from "../../lib/store/postgres/view_sync.ts";
import { DataDir } from "../../lib/store/mod.ts";
import type { PgLog } from "../../lib/store/postgres/mod.ts";
import { clusterTest, testRootKey } from "./helpers.ts";

/** A head that callers can move, read by a source whose reads answer when the test says. */
function controlledSource() {
  const state = { head: 0, applied: 0, sent: [] as Array<{ at: number; answer: (ok: boolean) => void }> };
  const source = {
    readHead: () =>
      new Promise<number>((resolve, reject) => {
        const headAtSend = () => state.head;
        state.sent.push({
          at: performance.now(),
          answer: (ok) => ok ? resolve(headAtSend()) : reject(new Error("database down")),
        });
      }),
    applied: () => state.applied,
    waitFor: (index: number) =>
      new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (state.applied >= index) {
            clearInterval(poll);
            resolve();
          }
        }, 5);
      }),
  };
  return { state, sync: new ViewSync(source) };
}

Deno.test("a caller arriving while a head read is under way waits for the next one", async () => {
  const { state, sync } = controlledSource();
  let firstDone = false;
  const first = sync.sync().then(() => (firstDone = true));
  assertEquals(state.sent.length, 1);
  // A commit is acknowledged after the first read was sent; then the second caller arrives.
  state.head = 1;
  let secondDone = false;
  const second = sync.sync().then(() => (secondDone = true));
  // The first read answered with the head as it was when sent... (answered as of now here: 1, applied 0).
  state.sent[0]!.answer(true);
  state.applied = 1;
  await first;
  assert(firstDone);
  // ...the second caller's read is sent only after the first, and the caller waits for it.
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(state.sent.length, 2);
  assert(!secondDone, "the second caller went on with a read sent before it arrived");
  state.head = 2;
  state.sent[1]!.answer(true);
  await new Promise((r) => setTimeout(r, 20));
  assert(!secondDone, "the second caller went on before the view reached the head");
  state.applied = 2;
  await second;
  assertEquals(sync.stats.syncs, 2);
});

Deno.test("a database that never answers holds no caller past the bound, then is skipped for a while", async () => {
  const { state, sync } = controlledSource();
  const started = performance.now();
  const first = sync.sync();
  await new Promise((r) => setTimeout(r, 300));
  // Arrives while the first read hangs: its own bound counts from its arrival, not the first read's plus its own.
  const arrived = performance.now();
  await Promise.all([first, sync.sync()]);
  const waited = performance.now() - arrived;
  assert(waited < 2_400, `a caller waited ${waited.toFixed(0)} ms`);
  assert(performance.now() - started < 2_700);
  // Right after: no wait at all while the database is known to be down.
  const skipped = performance.now();
  await sync.sync();
  assert(performance.now() - skipped < 50);
  assertEquals(state.sent.length, 1, "no read was sent while skipping");
  // A failing read (connection refused) is as good as an answer for the callers: they go on.
  await new Promise((r) => setTimeout(r, 1_100));
  const failing = sync.sync();
  state.sent.at(-1)!.answer(false);
  await failing;
  assertEquals(sync.stats.failed, 2, "the hung read and the refused one");
});

clusterTest(
  "a request's head read neither waits behind nor cuts off a slow read of the log table",
  {},
  async (cluster) => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-viewsync-" });
    cluster.defer(() => Deno.remove(dir, { recursive: true }));
    const data = await DataDir.open(dir, {
      checkpointMs: 60_000,
      databaseUrl: cluster.databaseUrl,
      rootKey: testRootKey(41),
    });
    cluster.defer(() => data.close());
    const log = data.log as PgLog;
    await data.store.transact([], () => ({ events: [{ Topic: "Node", Type: "t", Key: "a", Payload: {} }] }));
    // Another session holds the log table for 3 s: the tail's next read of it waits that long.
    const locked = cluster.db.begin(async (tx) => {
      await tx`LOCK TABLE wharf_log IN ACCESS EXCLUSIVE MODE`;
      await new Promise((r) => setTimeout(r, 3_000));
    });
    // The tail polls every second: by now its read is waiting for the lock.
    await new Promise((r) => setTimeout(r, 1_300));
    const started = performance.now();
    await log.sync();
    const took = performance.now() - started;
    assert(took < 1_000, `the head read waited ${took.toFixed(0)} ms behind the tail's read`);
    await locked;
    // The tail's read was not cut off: no error recorded, the node healthy.
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(log.lastError, undefined);
  },
);
