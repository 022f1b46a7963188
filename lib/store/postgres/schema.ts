// Connects to PostgreSQL and creates wharf's tables at start (under an advisory lock, so nodes starting
// together do not race on CREATE TABLE).

import postgres from "postgres";

export type Sql = postgres.Sql;

/** Advisory lock key (arbitrary constant) held while the schema is created or migrated. */
const schemaLockKey = 0x77686172_66n;

const tables = [
  // One row per committed batch: `line` is the batch's JSON text exactly as the stream serves it.
  `CREATE TABLE IF NOT EXISTS wharf_log (idx bigint PRIMARY KEY, line text NOT NULL)`,
  // The newest allocated Index: its row lock orders every commit across nodes.
  `CREATE TABLE IF NOT EXISTS wharf_head (id int PRIMARY KEY CHECK (id = 1), last bigint NOT NULL)`,
  `INSERT INTO wharf_head (id, last) VALUES (1, 0) ON CONFLICT DO NOTHING`,
  `CREATE TABLE IF NOT EXISTS wharf_meta (key text PRIMARY KEY, value bigint NOT NULL)`,
  `INSERT INTO wharf_meta (key, value) VALUES ('checkpoint', 0) ON CONFLICT DO NOTHING`,
  // The checkpoint: every document as of wharf_meta.checkpoint; doc NULL is a deletion (a tombstone keeps
  // a lagging node's older checkpoint from bringing the document back).
  `CREATE TABLE IF NOT EXISTS wharf_documents (
     collection text NOT NULL, id text NOT NULL, version int NOT NULL, idx bigint NOT NULL, doc text,
     PRIMARY KEY (collection, id))`,
  `CREATE TABLE IF NOT EXISTS wharf_counters (
     name text NOT NULL, key text NOT NULL, value double precision NOT NULL, PRIMARY KEY (name, key))`,
];

/**
 * Changes after version 1 (the tables above), by the version they lead to: each runs once, in order, on a
 * database at the version before it.
 */
const migrations: ReadonlyArray<{ version: number; statements: string[] }> = [
  // Group commit: every row carries its batch's random id, so a node whose COMMIT answer was lost (the
  // connection cut) can tell whether that batch committed (postgres/group_commit.ts).
  { version: 2, statements: [`ALTER TABLE wharf_log ADD COLUMN IF NOT EXISTS batch bigint`] },
];
const schemaVersion = migrations.at(-1)?.version ?? 1;

/** Opens a client (no connection is made until the first query). */
export function connect(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
    transform: { undefined: null },
  });
}

/** Creates the tables when missing; refuses a database written by a newer wharf. */
export async function ensureSchema(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${schemaLockKey.toString()}::bigint)`;
    for (const statement of tables) await tx.unsafe(statement);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS wharf_schema (version int NOT NULL)`);
    const rows = await tx`SELECT version FROM wharf_schema`;
    const current = rows.length === 0 ? 1 : Number(rows[0]!.version);
    if (current > schemaVersion) {
      throw new Error(`the database holds wharf schema ${current}; this wharf knows ${schemaVersion}`);
    }
    for (const m of migrations) {
      if (m.version > current) { for (const statement of m.statements) await tx.unsafe(statement); }
    }
    if (rows.length === 0) await tx`INSERT INTO wharf_schema (version) VALUES (${schemaVersion})`;
    else if (current < schemaVersion) await tx`UPDATE wharf_schema SET version = ${schemaVersion}`;
  });
}
