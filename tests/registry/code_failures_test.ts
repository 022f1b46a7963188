// The stored form of the limit of wrong two-factor codes (routes/registry/core/code_failures.ts,
// docs/security.md#throttles): at most ten times kept, the window's only, times ahead of this node's clock
// counting as now, and the wait until the oldest of the last ten leaves the window.

import { assertEquals } from "../helpers/assert.ts";
import {
  codeCheckWaitMs,
  recentFailures,
  withFailure,
  WRONG_CODES_WINDOW_MS,
} from "../../routes/registry/core/code_failures.ts";
import type { CodeFailuresDoc } from "../../routes/registry/core/model.ts";

const now = 1_800_000_000_000;

Deno.test("a user's document keeps at most the last ten wrong codes of the window", () => {
  let doc: CodeFailuresDoc | undefined = { failed_at: [now - WRONG_CODES_WINDOW_MS - 1] };
  for (let i = 0; i < 25; i++) doc = withFailure(doc, now + i);
  assertEquals(doc!.failed_at, Array.from({ length: 10 }, (_, i) => now + 15 + i));
  // Older than the window: not kept.
  assertEquals(withFailure({ failed_at: [now - WRONG_CODES_WINDOW_MS] }, now).failed_at, [now]);
});

Deno.test("checks wait until the oldest of the last ten wrong codes leaves the window", () => {
  const nine = Array.from({ length: 9 }, (_, i) => now - 60_000 + i);
  assertEquals(codeCheckWaitMs(nine, now), 0);
  assertEquals(codeCheckWaitMs([...nine, now], now), WRONG_CODES_WINDOW_MS - 60_000);
});

Deno.test("a wrong-code time ahead of this node's clock counts as now; what is not a time is ignored", () => {
  const stored = {
    failed_at: [now + 600_000, "x", Infinity, null, now - 10_000],
  } as unknown as CodeFailuresDoc;
  assertEquals(recentFailures(stored, now), [now - 10_000, now]);
  assertEquals(recentFailures({ failed_at: "no" } as unknown as CodeFailuresDoc, now), []);
  assertEquals(recentFailures(undefined, now), []);
});
