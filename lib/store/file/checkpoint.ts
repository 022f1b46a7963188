// Writes one checkpoint's changed documents: a packed collection's as one pack file (packs.ts), every other
// document as its own file by atomic replacement; then fsyncs the folders and removes what a compaction replaced.

import type { StoredDoc } from "../doc_types.ts";
import type { SnapshotEntry } from "../snapshots.ts";
import { atomicWrite, ensureDir, syncDir } from "./fsutil.ts";
import type { PackFolder } from "./packs.ts";

const encoder = new TextEncoder();

export interface CheckpointTarget {
  root: string;
  /** The log index every written state reflects. */
  upTo: number;
  /** Per-document files written at once (their fsyncs overlap). */
  parallelism: number;
  fileName(id: string): string;
  /** The collection's pack folder, undefined when it is not packed. */
  packFolder(collection: string): PackFolder | undefined;
  live(collection: string): Iterable<StoredDoc>;
}

export async function writeChangedDocuments(
  changed: SnapshotEntry[],
  target: CheckpointTarget,
): Promise<void> {
  const folders = new Set(changed.map(({ collection }) => `${target.root}/${collection}`));
  for (const dir of folders) await ensureDir(dir);
  const packed = new Map<string, { folder: PackFolder; docs: Map<string, StoredDoc | undefined> }>();
  const single: SnapshotEntry[] = [];
  for (const entry of changed) {
    const folder = target.packFolder(entry.collection);
    if (!folder) {
      single.push(entry);
      continue;
    }
    let pack = packed.get(entry.collection);
    if (!pack) packed.set(entry.collection, pack = { folder, docs: new Map() });
    pack.docs.set(entry.id, entry.current);
  }
  const afterSync: (() => Promise<void>)[] = [];
  for (const [collection, { folder, docs }] of packed) {
    const written = await folder.write(target.upTo, docs, () => target.live(collection));
    if (written.afterFolderSync) afterSync.push(written.afterFolderSync);
  }
  // Many files in flight at once let their fsyncs overlap; each is still temp → fsync → rename.
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(target.parallelism, single.length) }, async () => {
    while (next < single.length) {
      const { collection, id, current: stored } = single[next++]!;
      const path = `${target.root}/${collection}/${target.fileName(id)}`;
      if (stored) await atomicWrite(path, encoder.encode(JSON.stringify(stored)), { syncFolder: false });
      else await removeIfPresent(path);
    }
  }));
  for (const dir of folders) await syncDir(dir);
  for (const removeReplaced of afterSync) await removeReplaced();
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}
