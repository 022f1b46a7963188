// The store of waiting two-factor code steps (routes/console/code_steps.ts) on a data dir: each step used once,
// at most 5 per user, expired ones refused and swept (docs/security.md#throttles).

import { assertEquals } from "../helpers/assert.ts";
import { withAppContext } from "../helpers/app_context.ts";
import { CODE_STEPS, CodeSteps, MAX_CODE_STEPS_PER_USER } from "../../routes/console/code_steps.ts";

Deno.test("code steps: used once, 5 per user, expired ones refused and swept", async () => {
  await withAppContext({}, async (app) => {
    const steps = new CodeSteps(app.data.store, app.data.keys);
    const alice = [];
    for (let i = 0; i <= MAX_CODE_STEPS_PER_USER; i++) alice.push(await steps.open("alice", 60_000));
    const bob = await steps.open("bob", 60_000);
    // The sixth of alice's replaced her oldest; bob's is his own.
    assertEquals(alice.map((id) => steps.waits("alice", id)), [false, true, true, true, true, true]);
    assertEquals([steps.waits("bob", bob), steps.waits("alice", bob), steps.waits("bob", alice[1]!)], [
      true,
      false,
      false,
    ]);
    // Used once: the second use, and any look after, finds nothing.
    assertEquals([await steps.use("bob", bob), await steps.use("bob", bob), steps.waits("bob", bob)], [
      true,
      false,
      false,
    ]);
    assertEquals(app.data.store.get(CODE_STEPS, "bob"), undefined);
    // Expired: refused at once, and the sweep deletes what is left of them.
    const brief = await steps.open("carol", 1);
    await new Promise((r) => setTimeout(r, 5));
    assertEquals([steps.waits("carol", brief), await steps.use("carol", brief)], [false, false]);
    await steps.sweep(Date.now() + 60_000);
    assertEquals(app.data.store.count(CODE_STEPS), 0);
  });
});
