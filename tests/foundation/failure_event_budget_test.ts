// Unit tests of the failed-login event budget: what is written in full, what is counted, and the summaries.

import { assert, assertEquals } from "../helpers/assert.ts";
import {
  type Failure,
  FailureEventBudget,
  maxOtherAddresses,
  maxSampleLength,
} from "../../lib/failure_event_budget.ts";

function budget(now: { t: number }, perAddress = 2, perNode = 3) {
  return new FailureEventBudget({ perAddress, perNode, windowMs: 60_000, clock: () => now.t });
}

const failure = (address: string, name: string, reason = "throttled", subject = "ampw_1"): Failure => ({
  address,
  reason,
  name,
  subject,
});

Deno.test("the first failures of an address are written in full, the rest counted into the window's summary", () => {
  const now = { t: 120_000 };
  const b = budget(now);
  const full = ["a", "b", "c", "a", "d", "long".repeat(100)].map((n) => b.admit(failure("1.1.1.1", n)).full);
  assertEquals(full, [true, true, false, false, false, false]);
  assertEquals(b.takeEnded(), undefined, "the window has not ended");
  now.t = 180_000;
  const next = b.admit(failure("1.1.1.1", "e", "invalid_credentials"));
  assertEquals(next.full, true, "a new window writes in full again");
  assertEquals(next.ended, {
    windowStart: 120_000,
    windowEnd: 180_000,
    counted: 4,
    addresses: [{
      address: "1.1.1.1",
      written: 2,
      counted: 4,
      reasons: { throttled: 4 },
      names: ["c", "a", "d"],
      subjects: ["ampw_1"],
    }],
    others: { counted: 0, addresses: 0, reasons: {} },
  });
  now.t = 240_000;
  assertEquals(b.takeEnded(), undefined, "a window that counted nothing has no summary");
});

Deno.test("past the node's limit, other addresses' failures are counted together", () => {
  const now = { t: 0 };
  const b = budget(now);
  const full = [];
  for (let i = 0; i < 10; i++) full.push(b.admit(failure(`10.0.0.${i % 5}`, `n${i}`, `r${i % 2}`)).full);
  assertEquals(full, [true, true, true, false, false, false, false, false, false, false]);
  const s = b.takeAll()!;
  assertEquals(s.counted, 7);
  assertEquals(s.addresses.map((a) => [a.address, a.counted]), [["10.0.0.0", 1], ["10.0.0.1", 1], [
    "10.0.0.2",
    1,
  ]]);
  assertEquals(s.others, { counted: 4, addresses: 2, reasons: { r1: 2, r0: 2 } });
  assertEquals(b.takeAll(), undefined, "handed out once");
});

Deno.test("a spray of addresses and names keeps the summary and memory bounded", () => {
  const now = { t: 0 };
  const b = budget(now, 5, 20);
  let written = 0;
  for (let i = 0; i < 50_000; i++) {
    if (b.admit(failure(`a${i % 25_000}`, `${i}-${"x".repeat(200)}`)).full) written++;
  }
  assertEquals(written, 20);
  const s = b.takeAll()!;
  assertEquals(s.counted, 50_000 - 20);
  assertEquals(s.addresses.length, 20);
  assertEquals(s.others.addresses, maxOtherAddresses);
  for (const a of s.addresses) {
    assert(a.names.length <= 3 && a.names.every((n) => n.length <= maxSampleLength));
  }
  assert(JSON.stringify(s).length < 40_000, `summary of ${JSON.stringify(s).length} bytes`);
});
