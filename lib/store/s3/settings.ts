// Reads the blob store settings from the environment: WHARF_BLOB_STORE, WHARF_DOWNLOADS, WHARF_DOWNLOAD_URL_TTL,
// WHARF_S3_REMOVAL_GRACE (the S3 connection settings themselves are read by client.ts).

import { ConfigError } from "../../errors.ts";
import { envDurationMs } from "../../config.ts";

export interface S3Settings {
  /** WHARF_BLOB_STORE: s3://BUCKET[/PREFIX]. */
  url: string;
  /** WHARF_S3_ENDPOINT, WHARF_S3_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. */
  env: Record<string, string | undefined>;
  downloads: "redirect" | "proxy";
  urlTtlMs: number;
  /** WHARF_S3_REMOVAL_GRACE: a blob modified more recently is never removed (blobs.ts). */
  removalGraceMs?: number;
}

/** How recently modified a blob may be and still never be removed (s3/blobs.ts explains why 10 minutes). */
export const defaultRemovalGraceMs = 10 * 60_000;

/** WHARF_BLOB_STORE=s3://… and its settings (docs/scale-out.md); nothing for the default "file". */
export function s3Settings(env: Readonly<Record<string, string>>): { s3?: S3Settings } {
  const store = env.WHARF_BLOB_STORE ?? "file";
  const downloads = env.WHARF_DOWNLOADS ?? "redirect";
  if (downloads !== "redirect" && downloads !== "proxy") {
    throw new ConfigError(`WHARF_DOWNLOADS must be "redirect" or "proxy", got ${JSON.stringify(downloads)}`);
  }
  if (store === "file") return {};
  return {
    s3: {
      url: store,
      env,
      downloads,
      urlTtlMs: envDurationMs(env, "WHARF_DOWNLOAD_URL_TTL", 5 * 60_000),
      removalGraceMs: envDurationMs(env, "WHARF_S3_REMOVAL_GRACE", defaultRemovalGraceMs),
    },
  };
}
