// The blobs a document names, which a backup copies (those of the snapshot's final documents only).

import { blobName } from "../blobs.ts";

/**
 * Every blob `doc` names: an object under a `blob` (a provider's hosted file) or `staged` (a direct upload not yet
 * committed) member with a `sha256` of a blob's form.
 */
export function blobsNamedBy(doc: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown, key: string, depth: number) => {
    if (depth > 64 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, key, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    if (
      (key === "blob" || key === "staged") && typeof record.sha256 === "string" &&
      blobName.test(record.sha256)
    ) {
      found.push(record.sha256);
    }
    for (const [k, v] of Object.entries(record)) walk(v, k, depth + 1);
  };
  walk(doc, "", 0);
  return found;
}
