// List refreshes served from the auth state's change log (by commit index): after many rounds of changes each
// refresh returns exactly what changed and matches, and removed_ids holds deletions and items that stopped
// matching; plus the ChangeLog itself (repeated ids, generations, compaction).

import { assert, assertEquals } from "../helpers/assert.ts";
import { type AuthFixture, startAuthServer } from "./helpers.ts";
import { ChangeLog } from "../../routes/authmethods/change_log.ts";

Deno.test("ChangeLog answers by commit index and by generation, and compaction keeps live documents' last writes", () => {
  const live = new Set(["m/a", "m/b", "t/x"]);
  const log = new ChangeLog(
    [{ index: 2, collection: "m", id: "b" }, { index: 1, collection: "m", id: "a" }],
    2,
    (c, id) => live.has(`${c}/${id}`),
    () => live.size,
  );
  assertEquals([log.generation, log.lastIndex], [0, 2]);
  log.record("m", "c", 3);
  log.record("t", "x", 4);
  log.record("m", "a", 4); // a written again, in the same commit as x
  assertEquals(log.idsWrittenAfter("m", 1), ["a", "c", "b"]);
  assertEquals(log.idsWrittenAfter("m", 4), []);
  assertEquals(log.idsWrittenAfter("t", 0), ["x"]);
  assertEquals(log.changesAfter(1, 10)?.map((c) => c.id), ["a", "x"]);
  assertEquals(log.changesAfter(0, 2), undefined, "more changes than the limit");
  assertEquals(log.changesAfter(3, 10), []);
  assertEquals([log.generation, log.lastIndex], [3, 4]);
  // c is deleted; enough changes to a then make the log compact to the last write of each live document.
  live.delete("m/c");
  log.record("m", "c", 5);
  for (let i = 0; i < 1100; i++) log.record("m", "a", 6 + i);
  assert(log.size < 100, `${log.size} entries after compaction`);
  assertEquals(log.idsWrittenAfter("m", 0).sort(), ["a", "b"]);
  assertEquals(log.idsWrittenAfter("t", 0), ["x"]);
  assertEquals(log.changesAfter(3, 10), undefined, "history before the compaction is gone");
  log.record("m", "b", 2000);
  assertEquals(log.changesAfter(log.generation - 1, 10)?.map((c) => c.id), ["b"]);
});

/** Pages through one phase; returns the items, removed ids and the token of the next refresh. */
async function drain(f: AuthFixture, url: string, token?: string) {
  const items: Array<Record<string, unknown>> = [];
  const removed: string[] = [];
  let r = await f.admin.get(token ? `${url}&list_token=${token}` : url);
  for (;;) {
    assertEquals(r.status, 200, JSON.stringify(r.body));
    items.push(...(r.body.items ?? []));
    removed.push(...(r.body.removed_ids ?? []));
    if (r.body.response_type !== "delta") break;
    r = await f.admin.get(`${url}&list_token=${r.body.list_token}`);
  }
  return { items, removed, token: String(r.body.list_token) };
}

Deno.test("list refreshes after many rounds of changes return exactly the changes and the removals", async () => {
  const f = await startAuthServer();
  try {
    const org = (await f.admin.post("/v1/scopes", { scope_id: "global", name: "refresh-org" })).body.id;
    const versions = new Map<string, number>();
    const create = async (scope: string, name: string) => {
      const r = await f.admin.post("/v1/auth-methods", { scope_id: scope, type: "password", name });
      assertEquals(r.status, 200, JSON.stringify(r.body));
      versions.set(r.body.id, r.body.version);
      return r.body.id as string;
    };
    for (let i = 0; i < 24; i++) await create(i % 2 ? org : "global", `keep-${i}`);
    const filter = encodeURIComponent(`"/item/name" matches "^keep-"`);
    const url = `/v1/auth-methods?scope_id=global&recursive=true&page_size=3&filter=${filter}`;
    let { token } = await drain(f, url);
    let created = 0;
    for (let round = 0; round < 6; round++) {
      const ids = [...versions.keys()];
      const updated = ids.slice(round * 2, round * 2 + 4);
      const deleted = ids.slice(-2);
      const renamedAway = ids[round + 8]!; // stops matching the filter
      await Promise.all(updated.map(async (id) => {
        const r = await f.admin.patch(`/v1/auth-methods/${id}`, {
          version: versions.get(id),
          description: `r${round}`,
        });
        assertEquals(r.status, 200, JSON.stringify(r.body));
        versions.set(id, r.body.version);
      }));
      for (const id of deleted) {
        assertEquals((await f.admin.delete(`/v1/auth-methods/${id}`)).status, 200);
        versions.delete(id);
      }
      const r = await f.admin.patch(`/v1/auth-methods/${renamedAway}`, {
        version: versions.get(renamedAway),
        name: `gone-${round}`,
      });
      assertEquals(r.status, 200, JSON.stringify(r.body));
      versions.delete(renamedAway); // no longer part of the query
      const added = [
        await create(org, `keep-new-${created++}`),
        await create("global", `keep-new-${created++}`),
      ];

      const refresh = await drain(f, url, token);
      token = refresh.token;
      // Exactly the round's changes: each changed item that still matches once, nothing from earlier rounds.
      const expected = [...updated.filter((id) => versions.has(id)), ...added].sort();
      assertEquals(refresh.items.map((i) => String(i.id)).sort(), expected, `round ${round}: items`);
      assertEquals(
        [...refresh.removed].sort(),
        [...deleted, renamedAway].sort(),
        `round ${round}: removed_ids`,
      );
      // Sorted by updated_time, newest first.
      const times = refresh.items.map((i) => String(i.updated_time));
      assertEquals(times, [...times].sort().reverse());
    }
    // The chain of refreshes saw the same set a new listing sees.
    const fresh = await drain(f, url);
    assertEquals(new Set(fresh.items.map((i) => i.id)), new Set(versions.keys()));
  } finally {
    await f.stop();
  }
});
