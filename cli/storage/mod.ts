// `wharf storage migrate --data-dir DIR`: the command line of lib/store/migrate.ts, configured by the same
// settings a node uses (WHARF_DATABASE_URL, WHARF_BLOB_STORE and the S3 settings).

import { ConfigError } from "../../lib/errors.ts";
import { migrateDataDir } from "../../lib/store/migrate.ts";
import { s3Settings } from "../../lib/store/s3/settings.ts";

const usage = "usage: wharf storage migrate --data-dir DIR (target: WHARF_DATABASE_URL, WHARF_BLOB_STORE)";

/** Runs the command; returns the exit code (0 done, 1 failed, 2 wrong usage or settings). */
export async function runStorageCli(
  args: string[],
  env: Record<string, string>,
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
): Promise<number> {
  const dirAt = args.indexOf("--data-dir");
  const dataDir = dirAt >= 0 ? args[dirAt + 1] : env.WHARF_DATA_DIR;
  if (args[0] !== "migrate" || !dataDir) {
    err(usage);
    return 2;
  }
  try {
    const databaseUrl = env.WHARF_DATABASE_URL;
    if (!databaseUrl) throw new ConfigError("WHARF_DATABASE_URL names the database to migrate into");
    const { s3 } = s3Settings(env);
    if (!s3) out("note: WHARF_BLOB_STORE is file: blobs stay in the data directory and are not copied");
    const summary = await migrateDataDir({ dataDir, databaseUrl, ...(s3 ? { s3 } : {}), progress: out });
    out(
      `migrated ${dataDir}: ${summary.batches} log batches, ${summary.documents} documents, ` +
        `${summary.counters} counters, ${summary.blobs} blobs. Give every node this data directory's root key ` +
        `(${dataDir}/root.key, or the WHARF_ROOT_KEY it ran with) as WHARF_ROOT_KEY.`,
    );
    return 0;
  } catch (e) {
    err(`wharf storage migrate: ${e instanceof Error ? e.message : e}`);
    return e instanceof ConfigError ? 2 : 1;
  }
}
