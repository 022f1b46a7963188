// `backup verify`: every entry's sha256 against its header and its size against its cap, the manifest against the
// entries, the end marker; for an incremental, its base (found beside it or given) checked the same way and holding
// the blobs it lends.

import { ArchiveReader, type ArchiveScan, type EntryRecord, manifestEntry } from "./archive.ts";

export interface VerifiedArchive {
  path: string;
  scan: ArchiveScan;
  /** The base an incremental needs, once found and verified. */
  base?: { path: string; scan: ArchiveScan };
  problems: string[];
}

/** Checks `path` (and an incremental's base: `basePath`, or the file the manifest names beside it). */
export async function verifyBackup(
  path: string,
  options: { basePath?: string; maxEntryBytes?: number; progress?: (entry: EntryRecord) => void } = {},
): Promise<VerifiedArchive> {
  const scan = await scanFile(path, options);
  const result: VerifiedArchive = { path, scan, problems: [...scan.problems] };
  const reference = scan.manifest?.base;
  if (!reference) return result;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  const basePath = options.basePath ?? `${dir}${reference.file}`;
  let baseScan: ArchiveScan;
  try {
    baseScan = await scanFile(basePath, options);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    result.problems.push(
      `this is an incremental backup: its base ${reference.file} (snapshot index ${reference.snapshot_index}, ` +
        `manifest sha256 ${reference.manifest_sha256}) holds ${reference.blobs.length} of its blobs and was not ` +
        `found at ${basePath}: give it with --base FILE`,
    );
    return result;
  }
  for (const p of baseScan.problems) result.problems.push(`base ${basePath}: ${p}`);
  const manifestAt = baseScan.entries.find((e) => e.name === manifestEntry);
  if (manifestAt && manifestAt.sha256 !== reference.manifest_sha256) {
    result.problems.push(
      `${basePath} is not this backup's base (its manifest differs from the one recorded)`,
    );
    return result;
  }
  const held = new Set(baseScan.entries.map((e) => e.name));
  for (const sha256 of reference.blobs) {
    if (!held.has(`blobs/${sha256}`)) result.problems.push(`base ${basePath} lacks blobs/${sha256}`);
  }
  result.base = { path: basePath, scan: baseScan };
  return result;
}

async function scanFile(
  path: string,
  options: { maxEntryBytes?: number; progress?: (entry: EntryRecord) => void },
): Promise<ArchiveScan> {
  const reader = await ArchiveReader.open(path);
  try {
    const { maxEntryBytes, progress } = options;
    return await reader.scan({
      hash: true,
      ...(maxEntryBytes !== undefined ? { maxEntryBytes } : {}),
      ...(progress ? { progress } : {}),
    });
  } finally {
    reader.close();
  }
}
