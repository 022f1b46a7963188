// wharf issue #22 item 8 on a cluster: 150 simultaneous :set-password calls with an account's current version,
// spread over two nodes on one database, give exactly one 200 and 149 × 409, and no 503: each node takes the
// calls of one account in turn, and the version compared again in the commit settles the race between nodes.

import { assertEquals } from "../helpers/assert.ts";
import { adminPassword, Client, login } from "../authmethods/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const burst = 150;

clusterTest("150 simultaneous set-password calls over two nodes: one 200, 149 × 409, no 503", {
  // Real (Boundary default) argon2 cost: two hashes at a time per node, 64 queued.
  env: { WHARF_ARGON2_TIME: "3", WHARF_ARGON2_MEMORY_KIB: "65536" },
}, async (cluster) => {
  for (const name of ["one", "two"]) await cluster.spawn(name);
  const admins = await Promise.all(cluster.started.map(async (node) => {
    const anon = new Client(node.url);
    const scope = await anon.get("/v1/auth-methods?scope_id=global");
    const primary = scope.body.items.find((m: { is_primary?: boolean }) => m.is_primary);
    return { client: new Client(node.url, await login(anon, primary.id, "admin", adminPassword)), primary };
  }));
  const [one, two] = admins as [typeof admins[0], typeof admins[0]];
  const created = await one.client.post("/v1/accounts", {
    auth_method_id: one.primary.id,
    attributes: { login_name: "dave", password: "dave-password-1" },
  });
  assertEquals(created.status, 200);
  const { id, version } = created.body;
  await eventually(
    "the account on node two",
    async () => (await two.client.get(`/v1/accounts/${id}`)).body?.version === version ? true : undefined,
  );
  const answers = await Promise.all(
    Array.from(
      { length: burst },
      (_, i) =>
        [one, two][i % 2]!.client.post(`/v1/accounts/${id}:set-password`, {
          version,
          password: `new-password-${i}`,
        }),
    ),
  );
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  assertEquals(counts, { 200: 1, 409: burst - 1 });
  const winner = answers.findIndex((a) => a.status === 200);
  const signedIn = await two.client.post(`/v1/auth-methods/${two.primary.id}:authenticate`, {
    attributes: { login_name: "dave", password: `new-password-${winner}` },
  });
  assertEquals(signedIn.status, 200);
});
