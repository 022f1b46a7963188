// Wharf nodes started at the same instant on one empty PostgreSQL database: the schema is created once, there
// is exactly one administrator (docs/identity.md#one-administrator: one announced password, which signs in to
// the registry and the auth methods on every node), every node serves, and `POST /v1/acl/bootstrap` raced on
// them succeeds exactly once.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { Client as AuthClient, login } from "../authmethods/helpers.ts";
import { nodeEvent, publish, rootSecret } from "../events/stream_helpers.ts";
import { clusterTest } from "./helpers.ts";

const cheapHashes = { WHARF_ARGON2_TIME: "1", WHARF_ARGON2_MEMORY_KIB: "1024" };

/** A registry-only password a node announced (none any more), and the one administrator's password. */
function announced(stdout: string) {
  return {
    registry: [...stdout.matchAll(/created user "admin" with password (\S+)/g)].map((m) => m[1]!),
    auth: [...stdout.matchAll(/initial admin created: auth method (\S+), login name admin, password (\S+)/g)]
      .map((m) => ({ method: m[1]!, password: m[2]! })),
  };
}

clusterTest(
  "three nodes bootstrapping one empty database at once: one schema, one admin per family, all serve",
  {},
  async (cluster) => {
    // No configured passwords nor bootstrap secret: each node would generate its own, so a second bootstrap
    // would show.
    const env = {
      ...cheapHashes,
      WHARF_DATABASE_URL: cluster.databaseUrl,
      WHARF_ROOT_KEY: cluster.env.WHARF_ROOT_KEY!,
    };
    const nodes = await Promise.all(["one", "two", "three"].map((n) => cluster.nodes.spawn(n, env)));
    const stdouts = nodes.map((n) => n.stdout());

    assertEquals((await cluster.db`SELECT count(*)::int AS n FROM wharf_schema`)[0]!.n, 1);

    // One announcement in all: no registry-only password, and the one password logs in as the only registry
    // admin on every node.
    assertEquals(stdouts.flatMap((s) => announced(s).registry), [], stdouts.join("\n---\n"));
    const authAnnounced = stdouts.flatMap((s) => announced(s).auth);
    assertEquals(authAnnounced.length, 1, `one administrator: ${stdouts.join("\n---\n")}`);
    const { method, password } = authAnnounced[0]!;
    for (const node of nodes) {
      const api = new RegistryClient(node.url);
      const token = await api.login("admin", password);
      const users = await api.get("/api/v1/admin/users", { token });
      assertEquals(users.status, 200, users.text);
      assertEquals(users.body.users.map((u: { username: string }) => u.username), ["admin"]);
    }

    // Auth methods: one global password method, one admin user, the same password.
    for (const node of nodes) {
      const anon = new AuthClient(node.url);
      const methods = await anon.get("/v1/auth-methods?scope_id=global");
      assertEquals(methods.body.items.map((m: { id: string }) => m.id), [method]);
      const admin = new AuthClient(node.url, await login(anon, method, "admin", password));
      const users = await admin.get("/v1/users?scope_id=global");
      assertEquals(users.status, 200, JSON.stringify(users.body));
      const admins = users.body.items.filter((u: { admin?: boolean }) => u.admin);
      assertEquals(admins.length, 1, JSON.stringify(users.body.items));
      const accounts = await admin.get(`/v1/accounts?auth_method_id=${method}`);
      assertEquals(accounts.body.items.length, 1, JSON.stringify(accounts.body.items));
    }

    // The Nomad ACL bootstrap raced on every node (two requests each): exactly one management token.
    const answers = await Promise.all([...nodes, ...nodes].map(async (n) => {
      const r = await fetch(`${n.url}/v1/acl/bootstrap`, { method: "POST" });
      return { status: r.status, text: await r.text() };
    }));
    const won = answers.filter((a) => a.status === 200);
    assertEquals(won.length, 1, JSON.stringify(answers));
    for (const lost of answers.filter((a) => a.status !== 200)) {
      assertEquals(lost.status, 400, lost.text);
      assertMatch(lost.text, /^ACL bootstrap already done \(reset index: \d+\)$/);
    }
    const secret = JSON.parse(won[0]!.text).SecretID as string;
    for (const node of nodes) await publish(node.url, [nodeEvent(`after-${node.url}`)], secret);
    assert(cluster.started.every((n) => n.stderr().indexOf("Uncaught") < 0));
  },
);

clusterTest(
  "three nodes with one WHARF_ACL_BOOTSTRAP_SECRET started at once on an empty database all serve it",
  {},
  async (cluster) => {
    const nodes = await Promise.all(["one", "two", "three"].map((n) => cluster.spawn(n)));
    for (const node of nodes) {
      await publish(node.url, [nodeEvent(`from-${node.url}`)], rootSecret);
      const api = new RegistryClient(node.url);
      await api.login("admin", "admin-password-1");
    }
    const again = await fetch(`${nodes[0]!.url}/v1/acl/bootstrap`, { method: "POST" });
    assertEquals(again.status, 400);
    assertMatch(await again.text(), /^ACL bootstrap already done/);
    const tokens = await fetch(`${nodes[1]!.url}/v1/acl/tokens`, {
      headers: { "X-Nomad-Token": rootSecret },
    });
    const list = await tokens.json();
    assertEquals(list.filter((t: { Name: string }) => t.Name === "Bootstrap Token").length, 1);
  },
);
