// Reading a data directory's checkpointed documents from disk: the manifest's index, the collection folders, and
// one folder's documents (a file each, and/or packs). DocumentStore loads them all at start; `storage migrate`
// reads one collection at a time.

import type { StoredDoc } from "../doc_types.ts";
import { collectionPattern, idForFileName } from "../doc_names.ts";
import { tempSuffix } from "./fsutil.ts";
import { isPackFile, PackFolder } from "./packs.ts";

const families = ["registry", "auth", "cluster", "test"];

/** The log index the checkpointed documents reflect (0 without a manifest). */
export async function readCheckpointIndex(root: string): Promise<number> {
  try {
    const manifest = JSON.parse(await Deno.readTextFile(`${root}/manifest.json`));
    return Number(manifest.checkpointIndex) || 0;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw new Error(`cannot read ${root}/manifest.json: ${err}`);
  }
}

/** Every collection folder under `root`, e.g. { collection: "registry/users", dir: "<root>/registry/users" }. */
export function collectionFolders(root: string): Array<{ collection: string; dir: string }> {
  const found: Array<{ collection: string; dir: string }> = [];
  for (const family of families) {
    const familyDir = `${root}/${family}`;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(familyDir)];
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    for (const entry of entries) {
      if (!entry.isDirectory) continue;
      const collection = `${family}/${entry.name}`;
      if (collectionPattern.test(collection)) found.push({ collection, dir: `${familyDir}/${entry.name}` });
    }
  }
  return found;
}

/**
 * Reads one collection folder into `docs`, removing leftover temp files; returns its PackFolder when the folder
 * holds packs or the collection is configured `packed` (the highest index wins per id), undefined otherwise.
 * (A backup reads a running server's folder without writing in it: backup/checkpoint_spool.ts.)
 */
export function readCollectionFolder(
  dir: string,
  docs: Map<string, StoredDoc>,
  packed = false,
): PackFolder | undefined {
  // One synchronous pass over the folder. Measured faster than parallel async reads for many small files
  // (docs/benchmarks.md).
  const decoder = new TextDecoder();
  const names: string[] = [];
  const perDocFiles: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isFile) continue;
    const path = `${dir}/${entry.name}`;
    if (entry.name.endsWith(tempSuffix)) {
      Deno.removeSync(path);
      continue;
    }
    names.push(entry.name);
    if (isPackFile(entry.name)) packed = true;
    if (idForFileName(entry.name) === undefined) continue;
    perDocFiles.push(entry.name);
    const bytes = Deno.readFileSync(path);
    let stored: StoredDoc;
    try {
      stored = JSON.parse(decoder.decode(bytes));
    } catch {
      throw new Error(`document ${path} is not valid JSON`);
    }
    docs.set(stored.id, stored);
  }
  if (!packed) return undefined;
  const folder = new PackFolder(dir);
  folder.load(names, docs, perDocFiles);
  return folder;
}
