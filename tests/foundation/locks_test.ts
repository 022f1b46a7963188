// KeyedLocks: exclusive keys serialize, shared keys run together, and the two modes exclude each other.

import { assert, assertEquals } from "../helpers/assert.ts";
import { KeyedLocks } from "../../lib/store/locks.ts";

/** Resolves after pending promise callbacks have run (enough for a lock hand-over to happen). */
const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("locks: shared holders of one key run at the same time", async () => {
  const locks = new KeyedLocks();
  const a = await locks.acquire([], ["k"]);
  const b = await locks.acquire([], ["k"]);
  a();
  b();
  assertEquals(locks.held, 0);
});

Deno.test("locks: an exclusive holder waits for shared holders and later shared holders wait for it", async () => {
  const locks = new KeyedLocks();
  const order: string[] = [];
  const reader1 = await locks.acquire([], ["k"]);
  const writer = locks.acquire(["k"]).then((release) => {
    order.push("writer");
    return release;
  });
  const reader2 = locks.acquire(["other"], ["k"]).then((release) => {
    order.push("reader2");
    return release;
  });
  await settle();
  assertEquals(order, [], "nobody may pass the first shared holder's exclusive successor");
  reader1();
  const releaseWriter = await writer;
  await settle();
  assertEquals(order, ["writer"]);
  releaseWriter();
  (await reader2)();
  assertEquals(order, ["writer", "reader2"]);
  assertEquals(locks.held, 0);
});

Deno.test("locks: a key named both exclusive and shared is taken exclusive", async () => {
  const locks = new KeyedLocks();
  const first = await locks.acquire(["k"], ["k"]);
  let second = false;
  const pending = locks.acquire([], ["k"]).then((release) => {
    second = true;
    release();
  });
  await settle();
  assert(!second, "a shared holder entered while the key was held exclusively");
  first();
  await pending;
  assert(second);
});

Deno.test("locks: many shared holders in turn keep no state behind", async () => {
  const locks = new KeyedLocks();
  const held = await locks.acquire([], ["k"]);
  for (let i = 0; i < 1000; i++) (await locks.acquire([], ["k"]))();
  held();
  assertEquals(locks.held, 0);
  (await locks.acquire(["k"]))();
  assertEquals(locks.held, 0);
});
