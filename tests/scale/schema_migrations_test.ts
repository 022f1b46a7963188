// Schema migrations at start: two nodes starting at the same instant on an empty or a version-1 database both
// come up on the newest schema (one applies it, the other waits on the lock); a database migrated by a newer
// wharf is refused with exit code 2 and a message saying so, unless that newer schema records that this wharf
// still runs on it (an additive step: nodes upgraded one at a time).

import postgres from "postgres";
import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { ensureSchema } from "../../lib/store/postgres/schema.ts";
import { latestSchemaVersion, migrations } from "../../lib/store/postgres/migrations.ts";
import { clusterTest, Nodes } from "./helpers.ts";

const mainPath = new URL("../../main.ts", import.meta.url).pathname;

/** Starts two nodes at once on `url`; both must serve, on the newest schema, with one first admin. */
async function twoAtOnce(url: string, env: Record<string, string>): Promise<void> {
  const nodes = new Nodes();
  const db = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const onUrl = { ...env, WHARF_DATABASE_URL: url };
    const [a, b] = await Promise.all([nodes.spawn("a", onUrl), nodes.spawn("b", onUrl)]);
    for (const node of [a!, b!]) {
      assertEquals((await (await fetch(`${node.url}/health`)).json()).status, "ok");
      const token = await new RegistryClient(node.url).login("admin", "admin-password-1");
      assert(token.length > 0);
    }
    assertEquals((await db`SELECT version FROM wharf_schema`).map((r) => r.version), [latestSchemaVersion]);
    assertEquals((await db`SELECT count(*)::int AS n FROM wharf_nodes`)[0]!.n, 2);
  } finally {
    await db.end({ timeout: 1 });
    await nodes.stop("SIGKILL");
  }
}

clusterTest(
  "two nodes starting at once on an empty database, then on a version-1 one, both come up migrated",
  {},
  async (cluster) => {
    await twoAtOnce(cluster.databaseUrl, cluster.env);
    // A database as the first release left it: only migration 1 applied.
    const old = await cluster.pg.createDatabase();
    const sql = postgres(old, { max: 1, onnotice: () => {} });
    try {
      assertEquals(await ensureSchema(sql, migrations.slice(0, 1)), 1);
      assertEquals((await sql`SELECT to_regclass('wharf_nodes') AS t`)[0]!.t, null);
    } finally {
      await sql.end({ timeout: 1 });
    }
    await twoAtOnce(old, cluster.env);
  },
);

clusterTest(
  "a database written by a newer wharf is refused: exit code 2 and a clear message",
  {},
  async (cluster) => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-schema-" });
    cluster.defer(() => Deno.remove(dir, { recursive: true }));
    await ensureSchema(cluster.db);
    // As a newer wharf whose step older ones cannot run with records it.
    const next = latestSchemaVersion + 1;
    await cluster.db`UPDATE wharf_schema SET version = ${next}, runs_with_from = ${next}`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", mainPath, "--port", "0", "--data-dir", dir],
      env: cluster.env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 2, stderr);
    assert(
      stderr.includes(
        `the database holds wharf schema version ${latestSchemaVersion + 1}, newer than this wharf knows`,
      ),
      stderr,
    );
    assert(!new TextDecoder().decode(out.stdout).includes("listening"));
  },
);

clusterTest(
  "a database migrated by a newer wharf through an additive step still runs this wharf's nodes",
  {},
  async (cluster) => {
    const next = latestSchemaVersion + 1;
    // The newer wharf's step: a table this wharf never reads, declared to run with this wharf's schema.
    const additive = {
      version: next,
      purpose: "a table older wharfs do not read",
      statements: ["CREATE TABLE wharf_future (x int)"],
      runsWithFrom: latestSchemaVersion,
    };
    assertEquals(await ensureSchema(cluster.db, [...migrations, additive]), next);
    // This wharf uses it as it is: nothing migrated back, nothing refused.
    assertEquals(await ensureSchema(cluster.db), next);
    const node = await cluster.spawn("older");
    assertEquals((await (await fetch(`${node.url}/health`)).json()).status, "ok");
    const client = new RegistryClient(node.url);
    const token = await client.login("admin", "admin-password-1");
    const box = { box: { username: "admin", name: "still-writes" } };
    const created = await client.post("/api/v1/boxes", box, { token });
    assertEquals(created.status, 200, created.text);
    assertEquals(
      (await cluster.db`SELECT version, runs_with_from FROM wharf_schema`).map((
        r,
      ) => [r.version, r.runs_with_from]),
      [[next, latestSchemaVersion]],
    );
  },
);
