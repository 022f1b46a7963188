// The store's transact (lib/store/documents.ts) on a started server's store, on each backend (the file log here,
// PostgreSQL in the cluster pass): a plan that decides to write nothing (no writes, no events) appends no batch,
// resolves with the log's last index and its result, and is not a failed commit; a plan with writes still commits
// (the old code appended an empty batch for `{ writes: [] }`).

import { assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { loggedLines } from "../helpers/stored.ts";

Deno.test("a plan of no writes and no events appends no batch and is no failed commit", async () => {
  const srv = await startTestServer();
  try {
    const { store, log } = srv.server.data;
    const outcomes: boolean[] = [];
    // The metrics' observer is replaced for this test: it records whether each transact committed.
    store.observeCommits((_, committed) => outcomes.push(committed));
    const written = await store.transact(["test/items/a"], () => ({
      writes: [{ collection: "test/items", id: "a", doc: { n: 1 } }],
      result: "written",
    }));
    assertEquals(written.result, "written");
    const lines = await loggedLines(srv);
    const last = log.lastIndex;
    assertEquals(written.index, last);
    for (
      const plan of [{ result: "none" }, { writes: [], result: "none" }, {
        writes: [],
        events: [],
        result: "none",
      }]
    ) {
      const decided = await store.transact(["test/items/a"], () => plan);
      assertEquals(decided, { index: last, result: "none" });
    }
    assertEquals(await loggedLines(srv), lines, "an empty plan appended a batch");
    assertEquals(log.lastIndex, last);
    assertEquals(outcomes, [true, true, true, true]);
  } finally {
    await srv.stop();
  }
});
