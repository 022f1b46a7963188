// List refreshes served from the update-time and deletion-time indexes: after many rounds of changes each
// refresh returns what changed and matches, and removed_ids holds deletions and items that stopped
// matching; plus the TimeIndex itself (out-of-order times, repeated ids, rebuild).

import { assert, assertEquals } from "../helpers/assert.ts";
import { type AuthFixture, startAuthServer } from "./helpers.ts";
import { TimeIndex } from "../../routes/authmethods/time_index.ts";

Deno.test("TimeIndex returns each id once, newest first, whatever order writes arrive in", () => {
  const index = new TimeIndex<number>([{ time: 2, id: "b" }, { time: 1, id: "a" }]);
  index.add(5, "c");
  index.add(3, "d"); // late arrival
  index.add(6, "a"); // a written again
  assertEquals(index.idsSince(2), ["a", "c", "d", "b"]);
  assertEquals(index.idsSince(7), []);
  index.rebuild([{ time: 6, id: "a" }]);
  assertEquals(index.size, 1);
  assertEquals(index.idsSince(0), ["a"]);
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
    let previous = new Set<string>();
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
      const expected = new Set([...updated.filter((id) => versions.has(id)), ...added]);
      const got = new Set(refresh.items.map((i) => String(i.id)));
      for (const id of expected) assert(got.has(id), `round ${round}: ${id} missing from the refresh`);
      // Nothing else, except (at-least-once) a change of the previous round written in the same clock tick
      // as that refresh began.
      for (const id of got) assert(expected.has(id) || previous.has(id), `round ${round}: ${id} unexpected`);
      for (const id of [...deleted, renamedAway]) {
        assert(refresh.removed.includes(id), `round ${round}: ${id} not in removed_ids`);
      }
      // Sorted by updated_time, newest first.
      const times = refresh.items.map((i) => String(i.updated_time));
      assertEquals(times, [...times].sort().reverse());
      previous = expected;
    }
    // The chain of refreshes saw the same set a new listing sees.
    const fresh = await drain(f, url);
    assertEquals(new Set(fresh.items.map((i) => i.id)), new Set(versions.keys()));
  } finally {
    await f.stop();
  }
});
