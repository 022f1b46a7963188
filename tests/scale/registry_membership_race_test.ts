// A member removed from an organization on one node while the member creates boxes in it on the other: no box
// of theirs commits after the removal did (the right to write is checked again inside each write's plan, which
// a membership change — a global registry write — never overlaps).

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client } from "../registry/helpers.ts";
import { clusterTest } from "./helpers.ts";

const rounds = 8;
/** Box creates the member sends at once per round. */
const burst = 6;

clusterTest(
  "no box created by a member commits after their removal from the organization on another node",
  {},
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const [one, two] = cluster.started.map((n) => new Client(n.url)) as [Client, Client];
    const admin = await one.login("admin", "admin-password-1");
    const user = { username: "mark", email: "mark@example.com", password: "mark-password" };
    assertEquals((await one.post("/api/v1/admin/users", { user }, { token: admin })).status, 200);
    const mark = await one.login("mark", "mark-password");
    const org = { organization: { name: "acme", members: [{ username: "mark", role: "member" }] } };
    const created = await one.post("/api/v1/admin/organizations", org, { token: admin });
    assertEquals(created.status, 200, created.text);
    const membersPath = "/api/v1/admin/organizations/acme/members";

    let accepted = 0;
    for (let round = 0; round < rounds; round++) {
      // Mark is a member again (on node two), and node one knows it before the race starts.
      if (round > 0) {
        const back = await two.put(`${membersPath}/mark`, { member: { role: "member" } }, { token: admin });
        assertEquals(back.status, 200, back.text);
      }
      const creates = Array.from(
        { length: burst },
        (_, k) =>
          one.post("/api/v1/boxes", { box: { username: "acme", name: `r${round}-${k}` } }, { token: mark }),
      );
      const removal = two.delete(`${membersPath}/mark`, { token: admin });
      const answers = await Promise.all(creates);
      assertEquals((await removal).status, 200);
      for (const a of answers) {
        assert(a.status === 200 || a.status === 403, `${a.status} ${a.text}`);
        if (a.status === 200) accepted++;
      }
    }

    // The commit order, from the log table: each removal of mark from acme, and each box mark created.
    const rows = await cluster.db`SELECT idx, line FROM wharf_log ORDER BY idx`;
    let removedAt: number | undefined;
    const late: string[] = [];
    let boxes = 0;
    for (const row of rows) {
      const line = row.line as string;
      const idx = Number(row.idx);
      if (line.includes('"BoxCreated"') && line.includes('"actor":"mark"')) {
        boxes++;
        if (removedAt !== undefined) {
          late.push(`a box created at ${idx}, after mark's removal at ${removedAt}`);
        }
      } else if (line.includes('"acme"') && line.includes('"members"')) {
        // An organization write: mark is in its members again, or was just removed.
        removedAt = line.includes('"mark"') ? undefined : idx;
      }
    }
    assertEquals(late, []);
    assertEquals(boxes, accepted, "every accepted create is in the log once");
    console.log(`${accepted} of ${rounds * burst} creates accepted before the removal`);
  },
);
