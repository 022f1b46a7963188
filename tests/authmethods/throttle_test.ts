// Unit tests of the in-memory login throttle's bookkeeping.

import { assert, assertEquals } from "../helpers/assert.ts";
import { LoginThrottle } from "../../routes/authmethods/throttle.ts";

Deno.test("throttled-event times stay bounded under a spray of distinct keys", () => {
  const throttle = new LoginThrottle({
    nameThreshold: 5,
    ipThreshold: 50,
    windowMs: 900_000,
    lockMs: 60_000,
  });
  const start = 1_000_000;
  for (let i = 0; i < 150_000; i++) {
    // Each minute a new wave of 50,000 keys: older waves no longer suppress anything.
    assert(throttle.shouldReportThrottled(`i\u0000ip-${i}`, start + Math.floor(i / 50_000) * 61_000));
  }
  assert(throttle.trackedKeys <= 100_000, `tracked ${throttle.trackedKeys}`);
  assertEquals(throttle.shouldReportThrottled("i\u0000ip-149999", start + 2 * 61_000 + 1), false);
});
