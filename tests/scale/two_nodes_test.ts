// Two wharf processes on one PostgreSQL database: writes on one are visible on the other, a name created on
// both at once is created once, and events published on both reach both streams as one identical sequence.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client } from "../registry/helpers.ts";
import { nodeEvent, publish, subscribe } from "../events/stream_helpers.ts";
import { adminPassword, Client as AuthClient, login } from "../authmethods/helpers.ts";
import { clusterTest, eventually, indexesUntil } from "./helpers.ts";

clusterTest(
  "two nodes on one database: shared writes, one winner per name, identical event streams",
  { env: { WHARF_EVENTS_HEARTBEAT_MS: "200" } },
  async (cluster) => {
    const nodes = cluster.started;
    // One after the other: the second node starts from what the first bootstrapped (admin, ACL root token).
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const [one, two] = nodes.map((n) => new Client(n.url)) as [Client, Client];

    // A user created on one logs in on the other.
    const admin = await one.login("admin", "admin-password-1");
    const created = await one.post("/api/v1/admin/users", {
      user: { username: "alice", email: "alice@example.com", password: "alice-password" },
    }, { token: admin });
    assertEquals(created.status, 200, created.text);
    const alice = await eventually("alice visible on node two", async () => {
      const a = await two.post("/api/v1/authenticate", {
        user: { login: "alice", password: "alice-password" },
      });
      return a.status === 200 ? a.body.token as string : undefined;
    });

    // The same box name created on both nodes at once: exactly one success for each name.
    const results = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          Promise.all(
            [one, two].map((node) =>
              node.post("/api/v1/boxes", { box: { username: "alice", name: `box${i}` } }, { token: alice })
            ),
          ),
      ),
    );
    for (const [i, pair] of results.entries()) {
      const statuses = pair.map((a) => a.status).sort();
      assertEquals(statuses.filter((s) => s === 200).length, 1, `box${i}: ${pair.map((a) => a.text)}`);
    }
    for (const node of [one, two]) {
      const box = await eventually("box49 everywhere", async () => {
        const a = await node.get("/api/v1/box/alice/box49", { token: alice });
        return a.status === 200 ? a.body : undefined;
      });
      assertEquals(box.name, "box49");
    }

    // Conflicting PATCHes of one auth method version on both nodes: one winner, the other a conflict.
    const authOf = async (nodeUrl: string) => {
      const anon = new AuthClient(nodeUrl);
      const scope = await anon.get("/v1/auth-methods?scope_id=global");
      const primary = scope.body.items.find((m: { is_primary?: boolean }) => m.is_primary);
      return new AuthClient(nodeUrl, await login(anon, primary.id, "admin", adminPassword));
    };
    const [authOne, authTwo] = [await authOf(nodes[0]!.url), await authOf(nodes[1]!.url)];
    for (let round = 0; round < 5; round++) {
      const method = await authOne.post("/v1/auth-methods", {
        scope_id: "global",
        type: "password",
        version: 0,
      });
      assertEquals(method.status, 200);
      const id = method.body.id as string;
      await eventually(
        "the method on node two",
        async () => (await authTwo.get(`/v1/auth-methods/${id}`)).status === 200 ? true : undefined,
      );
      const patches = await Promise.all(
        [authOne, authTwo].map((c, i) =>
          c.patch(`/v1/auth-methods/${id}`, { version: 1, name: `round ${round} by node ${i}` })
        ),
      );
      const statuses = patches.map((p) => p.status).sort();
      assertEquals(
        statuses.filter((st) => st === 200).length,
        1,
        JSON.stringify(patches.map((p) => p.body)),
      );
      assert(statuses.every((st) => st === 200 || st >= 400), String(statuses));
    }

    // 500 events published across both nodes: both streams serve one identical, gapless sequence.
    const streams = await Promise.all(nodes.map((n) => subscribe(n.url, "index=1&topic=Node")));
    const indexes: number[] = [];
    for (let round = 0; round < 50; round++) {
      indexes.push(
        ...await Promise.all(
          Array.from({ length: 10 }, (_, i) => publish(nodes[i % 2]!.url, [nodeEvent(`n${round}-${i}`)])),
        ),
      );
    }
    const last = Math.max(...indexes);
    const seen = await Promise.all(streams.map((s) => indexesUntil(s, last)));
    assertEquals(seen[0], seen[1]);
    assertEquals(seen[0]!.length, 500);
    for (let i = 1; i < seen[0]!.length; i++) {
      assert(seen[0]![i]! > seen[0]![i - 1]!, "strictly increasing");
    }
    assertEquals([...seen[0]!].sort((a, b) => a - b), [...indexes].sort((a, b) => a - b));
  },
);
