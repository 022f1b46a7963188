// wharf's PostgreSQL schema as ordered migrations: a database records the newest one applied in wharf_schema, and
// a starting node applies the ones after it (schema.ts), never reordering or editing one already released.
// A step that wharfs of an earlier schema can still run on (it only adds what they neither read nor break: a new
// table, a nullable column they do not select) says so in `runsWithFrom`; then nodes can be upgraded one at a
// time (docs/scale-out.md, "Upgrades").

export interface Migration {
  version: number;
  /** What the step adds, for the log line and the error when it fails. */
  purpose: string;
  statements: readonly string[];
  /**
   * The oldest schema version whose wharf still runs correctly on the database once this step is applied:
   * its nodes keep serving, and start, beside upgraded ones. Default: this step's own version (older ones
   * refuse the database).
   */
  runsWithFrom?: number;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    purpose: "log, head, meta, documents and counters tables",
    statements: [
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
    ],
  },
  {
    version: 2,
    purpose: "live nodes and their slowest stream readers; who wrote the checkpoint",
    statements: [
      // One row per node: its heartbeat (database time) and the lowest log Index it still has to read (its view
      // or a stream reader). Retention keeps rows from the lowest over the nodes heard from recently.
      `CREATE TABLE wharf_nodes (
         name text PRIMARY KEY, slowest_reader bigint, heartbeat timestamptz NOT NULL, leader boolean NOT NULL)`,
      `ALTER TABLE wharf_meta ADD COLUMN written_by text, ADD COLUMN written_at timestamptz`,
    ],
  },
  {
    version: 3,
    purpose: "each log row's batch id (group commit)",
    statements: [
      // Every row carries its batch's random id, so a node whose COMMIT answer was lost (the connection cut)
      // can tell whether that batch committed (postgres/group_commit.ts).
      `ALTER TABLE wharf_log ADD COLUMN IF NOT EXISTS batch bigint`,
    ],
  },
];

/** The newest schema version this wharf knows. */
export const latestSchemaVersion = migrations.at(-1)!.version;

/** The oldest schema version whose wharf runs on a database migrated through `steps` (recorded with it). */
export function runsWithFrom(steps: readonly Migration[]): number {
  return Math.max(...steps.map((m) => m.runsWithFrom ?? m.version));
}
