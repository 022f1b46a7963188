// lib/keyed_turns.ts: one caller at a time per key in arrival order, other keys in parallel, the waiting line
// bounded per key and in all (503 with Retry-After), and no key kept once its last caller has left.

import { assert, assertEquals } from "../helpers/assert.ts";
import { ApiError } from "../../lib/errors.ts";
import { KeyedTurns } from "../../lib/keyed_turns.ts";

/** A promise and its resolver. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => open = resolve);
  return { opened, open };
}

Deno.test("callers of one key run one at a time in arrival order; another key does not wait", async () => {
  const turns = new KeyedTurns();
  const order: string[] = [];
  const first = gate();
  const a1 = turns.run("a", async () => {
    order.push("a1 start");
    await first.opened;
    order.push("a1 end");
  });
  const a2 = turns.run("a", () => Promise.resolve(order.push("a2")));
  const a3 = turns.run("a", () => Promise.reject(new Error("a3 failed")));
  const a4 = turns.run("a", () => Promise.resolve(order.push("a4")));
  await turns.run("b", () => Promise.resolve(order.push("b")));
  assertEquals(turns.waiting, 3);
  first.open();
  await Promise.all([a1, a2, a4, a3.catch(() => {})]);
  assertEquals(order, ["a1 start", "b", "a1 end", "a2", "a4"]);
  assertEquals([turns.keyCount, turns.waiting], [0, 0]);
});

Deno.test("a full line answers 503 with Retry-After, per key and in all, and frees up once it moves", async () => {
  const turns = new KeyedTurns({ maxWaitingPerKey: 2, maxWaiting: 3 });
  const held = gate();
  const running = [turns.run("a", () => held.opened), turns.run("b", () => held.opened)];
  const waiting = [turns.run("a", () => held.opened), turns.run("a", () => held.opened)];
  const refusals: unknown[] = [];
  await turns.run("a", () => Promise.resolve()).catch((err) => refusals.push(err));
  waiting.push(turns.run("b", () => held.opened));
  await turns.run("b", () => Promise.resolve()).catch((err) => refusals.push(err));
  assertEquals(refusals.length, 2);
  for (const err of refusals) {
    assert(err instanceof ApiError && err.status === 503, String(err));
    assertEquals(new Headers(err.headers).get("Retry-After"), "1");
  }
  assertEquals([turns.keyCount, turns.waiting], [2, 3]);
  held.open();
  await Promise.all([...running, ...waiting]);
  assertEquals([turns.keyCount, turns.waiting], [0, 0]);
  assertEquals(await turns.run("a", () => Promise.resolve("again")), "again");
});
