// Connects to PostgreSQL and brings its schema up to date at start (migrations.ts, under an advisory lock, so
// nodes starting together do not race on CREATE TABLE).

import postgres from "postgres";
import { ConfigError } from "../../errors.ts";
import { type Migration, migrations, runsWithFrom } from "./migrations.ts";

export type Sql = postgres.Sql;
/** What runs queries: a client, or one of its transactions. */
export type Queries = postgres.Sql | postgres.TransactionSql;

/** Advisory lock key (arbitrary constant) held while the schema is created or migrated. */
const schemaLockKey = 0x77686172_66n;

/**
 * Opens a client (no connection is made until the first query). `session`: one connection kept for as long as
 * it lives (never closed when idle nor recycled), for a session-level lock.
 */
export function connect(url: string, options: { max?: number; session?: boolean } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: options.session ? 0 : 60,
    ...(options.session ? { max_lifetime: null } : {}),
    transform: { undefined: null },
  });
}

/**
 * Brings the database to the newest schema this wharf knows, applying the missing migrations in order, in the
 * transaction that records them; nodes starting together wait on one advisory lock, so exactly one applies them.
 * A database migrated by a newer wharf is used as it is when it records that this wharf's schema still runs on
 * it (migrations.ts `runsWithFrom`), and refused otherwise (ConfigError: exit 2) before anything is touched.
 * Returns the database's schema version.
 */
export async function ensureSchema(sql: Sql, known: readonly Migration[] = migrations): Promise<number> {
  const latest = known.at(-1)!.version;
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${schemaLockKey.toString()}::bigint)`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS wharf_schema (version int NOT NULL)`);
    // The oldest schema version whose wharf may run on this database (NULL before this column existed).
    await tx.unsafe(`ALTER TABLE wharf_schema ADD COLUMN IF NOT EXISTS runs_with_from int`);
    const rows = await tx`SELECT version, runs_with_from FROM wharf_schema`;
    const found = rows.length ? Number(rows[0]!.version) : 0;
    if (found > latest) {
      const oldest = Number(rows[0]!.runs_with_from ?? found);
      if (oldest <= latest) return found;
      throw new ConfigError(
        `the database holds wharf schema version ${found}, newer than this wharf knows (${latest}), and runs ` +
          `wharfs of schema ${oldest} or newer: run a wharf at least as new as the one that upgraded it`,
      );
    }
    for (const migration of known) {
      if (migration.version <= found) continue;
      for (const statement of migration.statements) await tx.unsafe(statement);
    }
    const oldest = runsWithFrom(known);
    if (rows.length === 0) {
      await tx`INSERT INTO wharf_schema (version, runs_with_from) VALUES (${latest}, ${oldest})`;
    } else await tx`UPDATE wharf_schema SET version = ${latest}, runs_with_from = ${oldest}`;
    return latest;
  });
}
