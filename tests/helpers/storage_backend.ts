// Runs the suites that use startTestServer on the scale-out backends when WHARF_TEST_STORAGE says so:
// "postgres" (documents, log, counters on PostgreSQL) or "postgres-s3" (and blobs on Swift's S3 API, downloads
// proxied unless WHARF_TEST_DOWNLOADS=redirect). Each server gets a fresh database and bucket; the engines start
// once per test file and stop when it ends, or are shared by every file of a run that started them once
// (WHARF_TEST_SHARED_POSTGRES, WHARF_TEST_SHARED_S3: tests/cluster_pass.ts).

import postgresClient from "postgres";
import { type PostgresServer, startPostgres } from "../fixtures/postgres.ts";
import { startSwift, type SwiftServer } from "../fixtures/swift.ts";
import { createS3Client, ensureBucket } from "../../lib/store/s3/client.ts";

const mode = Deno.env.get("WHARF_TEST_STORAGE") ?? "file";
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(3)));

let postgres: Promise<PostgresServer> | undefined;
let swift: Promise<SwiftServer> | undefined;
let buckets = 0;
let databases = 0;
/** Names this test module's databases and buckets: deno test runs every file in one process (one pid). */
const moduleTag = crypto.randomUUID().slice(0, 8);

/** The storage settings for one new test server ({} on the default data directory). */
export async function testStorageEnv(): Promise<Record<string, string>> {
  if (mode === "file") return {};
  if (mode !== "postgres" && mode !== "postgres-s3") {
    throw new Error(`WHARF_TEST_STORAGE must be file, postgres or postgres-s3, not ${mode}`);
  }
  const env: Record<string, string> = { WHARF_DATABASE_URL: await createDatabase(), WHARF_ROOT_KEY: rootKey };
  if (mode === "postgres-s3") {
    const bucket = `wharf-suite-${moduleTag}-${++buckets}`;
    const shared = Deno.env.get("WHARF_TEST_SHARED_S3");
    swift ??= shared ? undefined : startSwift().then((s) => {
      globalThis.addEventListener("unload", () => s.stopSync());
      return s;
    });
    Object.assign(env, shared ? sharedS3Env(shared, bucket) : (await swift!).env(bucket), {
      WHARF_DOWNLOADS: Deno.env.get("WHARF_TEST_DOWNLOADS") ?? "proxy",
      // Blobs and tmp/ objects younger than this are never removed (a guard for uploads on other nodes, 10 min
      // by default); the suites' one-node servers check collection within seconds.
      WHARF_S3_REMOVAL_GRACE: "1s",
    });
    await createBucket(env, bucket);
  }
  return env;
}

/** A fresh database on the shared PostgreSQL (WHARF_TEST_SHARED_POSTGRES: its admin URL) or this process's. */
async function createDatabase(): Promise<string> {
  const shared = Deno.env.get("WHARF_TEST_SHARED_POSTGRES");
  if (!shared) {
    postgres ??= startPostgres().then((pg) => {
      globalThis.addEventListener("unload", () => pg.stopSync());
      return pg;
    });
    return await (await postgres).createDatabase();
  }
  const name = `wharf_suite_${moduleTag}_${++databases}`;
  const sql = postgresClient(shared, { max: 1, onnotice: () => {} });
  try {
    // Test files run one after another: the databases of earlier ones that nothing uses any more go first, so
    // the shared server's disk stays bounded (a database still connected to is refused and stays).
    const stale = await sql`SELECT datname FROM pg_database WHERE datname LIKE 'wharf_suite_%'
      AND datname NOT LIKE ${`wharf_suite_${moduleTag}_%`}
      AND datname NOT IN (SELECT datname FROM pg_stat_activity WHERE datname IS NOT NULL)`;
    for (const { datname } of stale) await sql.unsafe(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {});
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end();
  }
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * Creates the server's bucket before it starts, patiently: a single-worker Swift on a busy machine answers a
 * container PUT with 503 "Please reduce your request rate" now and then, which would fail the server's start.
 */
async function createBucket(env: Record<string, string>, bucket: string): Promise<void> {
  const client = createS3Client(env);
  try {
    for (let attempt = 1;; attempt++) {
      try {
        return await ensureBucket(client, bucket);
      } catch (err) {
        if (attempt >= 10) throw err;
        await new Promise((r) => setTimeout(r, 500 * attempt));
      }
    }
  } finally {
    client.destroy();
  }
}

/** The blob-store settings for `bucket` on the shared Swift (WHARF_TEST_SHARED_S3: JSON of its settings). */
function sharedS3Env(shared: string, bucket: string): Record<string, string> {
  return { ...JSON.parse(shared), WHARF_BLOB_STORE: `s3://${bucket}` };
}

/** The backend this run's test servers use: "file", "postgres" or "postgres-s3". */
export const testStorage = mode;

/** True when hosted downloads of this run's servers answer 302 to a presigned object-store URL. */
export const testDownloadsRedirect = mode === "postgres-s3" &&
  (Deno.env.get("WHARF_TEST_DOWNLOADS") ?? "proxy") === "redirect";

/**
 * For Deno.test's `ignore`: true (printing the test's name and `reason`) when this run is not on the data
 * directory's files, for a test of behaviour only the file backend has.
 */
export function fileBackendOnly(name: string, reason: string): boolean {
  if (mode === "file") return false;
  console.warn(`SKIPPED on WHARF_TEST_STORAGE=${mode}: "${name}": ${reason}`);
  return true;
}
