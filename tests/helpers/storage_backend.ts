// Runs the suites that use startTestServer on the scale-out backends when WHARF_TEST_STORAGE says so:
// "postgres" (documents, log, counters on PostgreSQL) or "postgres-s3" (and blobs on Swift's S3 API, downloads
// proxied unless WHARF_TEST_DOWNLOADS=redirect). Each server gets a fresh database and bucket; the engines start
// once per test process and stop when it exits.

import { type PostgresServer, startPostgres } from "../fixtures/postgres.ts";
import { startSwift, type SwiftServer } from "../fixtures/swift.ts";

const mode = Deno.env.get("WHARF_TEST_STORAGE") ?? "file";
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(3)));

let postgres: Promise<PostgresServer> | undefined;
let swift: Promise<SwiftServer> | undefined;
let buckets = 0;

/** The storage settings for one new test server ({} on the default data directory). */
export async function testStorageEnv(): Promise<Record<string, string>> {
  if (mode === "file") return {};
  if (mode !== "postgres" && mode !== "postgres-s3") {
    throw new Error(`WHARF_TEST_STORAGE must be file, postgres or postgres-s3, not ${mode}`);
  }
  postgres ??= startPostgres().then((pg) => {
    globalThis.addEventListener("unload", () => pg.stopSync());
    return pg;
  });
  const env: Record<string, string> = {
    WHARF_DATABASE_URL: await (await postgres).createDatabase(),
    WHARF_ROOT_KEY: rootKey,
  };
  if (mode === "postgres-s3") {
    swift ??= startSwift().then((s) => {
      globalThis.addEventListener("unload", () => s.stopSync());
      return s;
    });
    Object.assign(env, (await swift).env(`wharf-suite-${Deno.pid}-${++buckets}`), {
      WHARF_DOWNLOADS: Deno.env.get("WHARF_TEST_DOWNLOADS") ?? "proxy",
    });
  }
  return env;
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
