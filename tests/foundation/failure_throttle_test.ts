// FailureThrottle: attempts hold slots while they are checked, so concurrent failures never pass a limit;
// lock and sliding windows, waiting, release on a throw, and bounded memory.

import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { FailureLimitReached, FailureThrottle } from "../../lib/failure_throttle.ts";

const tick = () => new Promise((r) => setTimeout(r, 1));

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

Deno.test("concurrent failing attempts on one key are checked at most the limit of times", async () => {
  const throttle = new FailureThrottle({ name: { limit: 3, windowMs: 60_000, lockMs: 60_000 } });
  let checked = 0;
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, async () => {
    const attempt = await throttle.begin({ name: "alice" });
    return await attempt.run(async () => {
      checked++;
      await tick();
      return false;
    }, (ok) => ok);
  }));
  assertEquals(checked, 3);
  const refused = outcomes.filter((o) => o.status === "rejected");
  assertEquals(refused.length, 17);
  for (const o of refused) {
    const reason = (o as PromiseRejectedResult).reason;
    assert(reason instanceof FailureLimitReached && reason.retryAfter === 60, String(reason));
  }
});

Deno.test("an attempt waits while the ones in flight could reach the limit and goes on after a success", async () => {
  const throttle = new FailureThrottle({ name: { limit: 2, windowMs: 60_000, lockMs: 60_000 } });
  const first = await throttle.begin({ name: "alice" });
  const second = await throttle.begin({ name: "alice" });
  let third = false;
  const waiting = throttle.begin({ name: "alice" }).then((a) => {
    third = true;
    return a;
  });
  await tick();
  assert(!third, "the third attempt went ahead while two could still lock the key");
  first.fail();
  await tick();
  assert(!third, "one failure and one attempt in flight still reach the limit");
  second.succeed(["name"]);
  (await waiting).release();
  assert(third);
  // The success cleared the failure: two more attempts run together.
  (await throttle.begin({ name: "alice" })).fail();
  (await throttle.begin({ name: "alice" })).release();
});

Deno.test("waiters are refused once the attempts in flight lock the key", async () => {
  const throttle = new FailureThrottle({ name: { limit: 1, windowMs: 60_000, lockMs: 30_000 } });
  const first = await throttle.begin({ name: "alice" });
  const waiting = [throttle.begin({ name: "alice" }), throttle.begin({ name: "alice" })];
  first.fail();
  for (const w of waiting) await assertRejects(() => w, (err) => err instanceof FailureLimitReached);
});

Deno.test("a check that throws frees its slots without counting", async () => {
  const throttle = new FailureThrottle({ name: { limit: 1, windowMs: 60_000, lockMs: 60_000 } });
  for (let i = 0; i < 3; i++) {
    const attempt = await throttle.begin({ name: "alice" });
    await assertRejects(() => attempt.run(() => Promise.reject(new Error("queue full")), () => true));
  }
  assertEquals(throttle.blockedSeconds({ name: "alice" }), 0);
  assertEquals(throttle.size, 0);
});

Deno.test("a lock lasts lockMs after the limit, then counting starts again", async () => {
  const clock = manualClock();
  const throttle = new FailureThrottle(
    { name: { limit: 2, windowMs: 60_000, lockMs: 120_000 } },
    { clock: clock.read },
  );
  (await throttle.begin({ name: "a" })).fail();
  clock.now += 59_000;
  (await throttle.begin({ name: "a" })).fail();
  assertEquals(throttle.blockedSeconds({ name: "a" }), 120);
  clock.now += 119_500;
  await assertRejects(
    () => throttle.begin({ name: "a" }),
    (err) => (err as FailureLimitReached).retryAfter === 1,
  );
  clock.now += 500;
  (await throttle.begin({ name: "a" })).fail();
  assertEquals(throttle.blockedSeconds({ name: "a" }), 0);
});

Deno.test("a sliding window blocks until the oldest counted failure leaves it", async () => {
  const clock = manualClock();
  const throttle = new FailureThrottle({ login: { limit: 2, windowMs: 60_000 } }, { clock: clock.read });
  throttle.record({ login: "a" });
  clock.now += 10_000;
  throttle.record({ login: "a" });
  assertEquals(throttle.blockedSeconds({ login: "a" }), 50);
  clock.now += 50_000;
  assertEquals(throttle.blockedSeconds({ login: "a" }), 0);
  (await throttle.begin({ login: "a" })).release();
});

Deno.test("every key of an attempt counts, and one blocked key refuses it", async () => {
  const throttle = new FailureThrottle({
    name: { limit: 5, windowMs: 60_000, lockMs: 60_000 },
    ip: { limit: 2, windowMs: 60_000, lockMs: 60_000 },
  });
  (await throttle.begin({ name: "a", ip: "10.0.0.1" })).fail();
  (await throttle.begin({ name: "b", ip: "10.0.0.1" })).fail();
  await assertRejects(() => throttle.begin({ name: "c", ip: "10.0.0.1" }));
  (await throttle.begin({ name: "c", ip: "10.0.0.2" })).succeed(["name"]);
});

Deno.test("too many attempts waiting on one key are refused", async () => {
  const throttle = new FailureThrottle({ ip: { limit: 1, windowMs: 60_000 } }, { maxWaiters: 2 });
  const first = await throttle.begin({ ip: "x" });
  const waiting = [throttle.begin({ ip: "x" }), throttle.begin({ ip: "x" })];
  await assertRejects(
    () => throttle.begin({ ip: "x" }),
    (err) => (err as FailureLimitReached).retryAfter === 1,
  );
  first.succeed();
  (await waiting[0]!).succeed();
  (await waiting[1]!).succeed();
  assertEquals(throttle.size, 0);
});

Deno.test("memory stays bounded under a spray of keys and keys in flight are never forgotten", async () => {
  const throttle = new FailureThrottle({ name: { limit: 2, windowMs: 600_000, lockMs: 600_000 } }, {
    maxKeys: 1_000,
  });
  const held = await throttle.begin({ name: "held" });
  (await throttle.begin({ name: "held" })).fail();
  for (let i = 0; i < 5_000; i++) throttle.record({ name: `spray-${i}` });
  assert(throttle.size <= 1_000, String(throttle.size));
  held.fail();
  assertEquals(throttle.blockedSeconds({ name: "held" }), 600);
});
