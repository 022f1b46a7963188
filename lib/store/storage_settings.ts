// Where a node keeps its state, read from the environment the same way by the server and by every offline
// command: WHARF_ROOT_KEY, WHARF_DATABASE_URL (PostgreSQL) and WHARF_BLOB_STORE with its S3 settings.

import type { DataDirOptions } from "./data_dir.ts";
import { s3Settings } from "./s3/settings.ts";

/** The DataDir options naming the node's storage backends ({} beyond the data dir on the default files). */
export function storageSettings(
  env: Readonly<Record<string, string>>,
): Pick<DataDirOptions, "rootKey" | "databaseUrl" | "s3"> {
  return {
    ...(env.WHARF_ROOT_KEY ? { rootKey: env.WHARF_ROOT_KEY } : {}),
    ...(env.WHARF_DATABASE_URL ? { databaseUrl: env.WHARF_DATABASE_URL } : {}),
    ...s3Settings(env),
  };
}
