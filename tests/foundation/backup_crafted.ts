// Archives written by hand for the backup tests, in the format of docs/operations.md#the-archive, every size and
// sha256 consistent, so no cap or check of wharf's writer shapes them: what a stranger may hand to verify/restore.

import { createHash } from "node:crypto";

const encoder = new TextEncoder();

export interface CraftedEntry {
  name: string;
  /** The payload, in chunks (the same chunk may repeat). */
  chunks: Uint8Array[];
}

export interface EntryRecord {
  name: string;
  size: number;
  sha256: string;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
}

/** A manifest as `backup create` writes it for `records`, `documents` documents and no blobs. */
export function plainManifest(records: EntryRecord[], documents: number): unknown {
  return {
    format: "wharf-backup",
    version: 1,
    snapshot_index: 1,
    first_index: 2,
    batches: 0,
    documents,
    blobs: 0,
    root_key: false,
    missing_blobs: [],
    base: null,
    entries: records,
  };
}

/**
 * Writes an archive of `entries` and a manifest (`manifest` given the entries' records; `plainManifest` unless
 * given); returns the entries' records.
 */
export async function writeCraftedArchive(
  path: string,
  entries: CraftedEntry[],
  manifest: (records: EntryRecord[]) => unknown = (records) => plainManifest(records, 0),
): Promise<EntryRecord[]> {
  const records = entries.map(({ name, chunks }) => {
    const hash = createHash("sha256");
    let size = 0;
    for (const chunk of chunks) {
      hash.update(chunk);
      size += chunk.length;
    }
    return { name, size, sha256: hash.digest("hex") };
  });
  const header = (r: EntryRecord) =>
    encoder.encode(JSON.stringify({ entry: r.name, size: r.size, sha256: r.sha256 }) + "\n");
  const manifestBytes = encoder.encode(JSON.stringify(manifest(records)));
  const manifestRecord = {
    name: "manifest.json",
    size: manifestBytes.length,
    sha256: createHash("sha256").update(manifestBytes).digest("hex"),
  };
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  try {
    await writeAll(file, encoder.encode("WHARF-BACKUP 1\n"));
    for (const [i, { chunks }] of entries.entries()) {
      await writeAll(file, header(records[i]!));
      for (const chunk of chunks) await writeAll(file, chunk);
      await writeAll(file, encoder.encode("\n"));
    }
    await writeAll(file, header(manifestRecord));
    await writeAll(file, manifestBytes);
    await writeAll(file, encoder.encode("\nWHARF-BACKUP-END\n"));
  } finally {
    file.close();
  }
  return records;
}

/**
 * A documents entry of `lines` documents, each one line at the JSON-value cap of the default --max-entry-bytes
 * (1,048,576: its 5 containers and commas, then 524,285 `{}` and their commas): ~1.6 MB, ~50 MB parsed.
 */
export function denseDocuments(name: string, lines: number): CraftedEntry {
  const objects = "{},".repeat(524_284) + "{}";
  const chunks = Array.from(
    { length: lines },
    (_, i) => encoder.encode(`{"id":"dense-${i}","version":1,"index":1,"doc":{"v":[${objects}]}}\n`),
  );
  return { name, chunks };
}
