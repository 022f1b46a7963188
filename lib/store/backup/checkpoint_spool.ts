// Reads a running server's checkpointed collection folder into a backup's spool a document at a time, writing
// nothing in the folder: its document files, and its packs in two passes over the same open files (the winning
// index per id, then the winners), so neither the folder's documents nor a whole pack is ever held.

import type { StoredDoc } from "../doc_types.ts";
import { idForFileName } from "../doc_names.ts";
import { tempSuffix } from "../file/fsutil.ts";
import { fileLines } from "../file/line_reader.ts";
import { isPackFile, type PackLine, packsToRead, parsePackLine } from "../file/packs.ts";
import { blobsNamedBy } from "./blob_refs.ts";
import type { DocSpool } from "./doc_spool.ts";

const decoder = new TextDecoder();
/** A winning index whose document is a file, not a pack line (packs.ts: a pack wins an equal index). */
const fileWins = -1;

/**
 * Spools `dir`'s documents as DocumentStore would load them (collection_folder.ts): a file each, and/or packs where
 * the highest index wins per id (a newest base drops the files). Temp files are another process's checkpoint in
 * progress and are skipped, and so is a document file a checkpoint removed after the listing (its deletion is in
 * the log after the manifest's index, which the backup replays). A pack removed before it was opened throws
 * Deno.errors.NotFound: the caller reads the snapshot again.
 */
export async function spoolCollectionFolder(
  dir: string,
  packed: boolean,
  spool: DocSpool,
): Promise<void> {
  const names: string[] = [];
  const perDocFiles: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isFile || entry.name.endsWith(tempSuffix)) continue;
    names.push(entry.name);
    if (isPackFile(entry.name)) packed = true;
    if (idForFileName(entry.name) !== undefined) perDocFiles.push(entry.name);
  }
  const { read, base } = packed ? packsToRead(names) : { read: [], base: undefined };
  // Every pack is opened before any is read: a compaction may remove them meanwhile, and an open file stays readable.
  const packs: Array<{ path: string; file: Deno.FsFile; size: number }> = [];
  try {
    for (const p of read) {
      const path = `${dir}/${p.name}`;
      const file = await Deno.open(path, { read: true });
      packs.push({ path, file, size: 0 }); // listed before its stat, so closed either way
      packs.at(-1)!.size = (await file.stat()).size;
    }
    const winners = await winningIndexes(packs);
    if (!base) {
      for (const name of perDocFiles) {
        const stored = readDocumentFile(`${dir}/${name}`);
        if (!stored) continue;
        const won = winners.get(stored.id);
        if (won !== undefined && indexOf(won) >= stored.index) continue;
        winners.set(stored.id, fileWins);
        await spool.add({ id: stored.id, line: JSON.stringify(stored), blobs: blobsNamedBy(stored.doc) });
      }
    }
    for (const { path, file, size } of packs) {
      for await (const line of fileLines(file, 0, size)) {
        if (line === "") continue;
        const entry = parsePackLine(line, path);
        if ("deleted" in entry || winners.get(entry.id) !== encode(entry)) continue;
        // Written once: an equal state at an equal index in a later pack is the same log line's.
        winners.delete(entry.id);
        await spool.add({ id: entry.id, line, blobs: blobsNamedBy(entry.doc) });
      }
    }
  } finally {
    for (const { file } of packs) file.close();
  }
}

/** id → the winning pack line's index and whether it is a deletion (encode), over every pack in order. */
async function winningIndexes(
  packs: Array<{ path: string; file: Deno.FsFile; size: number }>,
): Promise<Map<string, number>> {
  const winners = new Map<string, number>();
  for (const { path, file, size } of packs) {
    for await (const line of fileLines(file, 0, size)) {
      if (line === "") continue;
      const entry = packLineHead(line) ?? parsePackLine(line, path);
      const won = winners.get(entry.id);
      if (won === undefined || entry.index >= indexOf(won)) winners.set(entry.id, encode(entry));
    }
  }
  return winners;
}

/** How packs.ts writes a document's and a deletion's line: its id and index lead. */
const documentHead = /^\{"id":("(?:[^"\\]|\\.)*"),"version":\d+,"index":(\d+),"doc":/;
const deletionLine = /^\{"id":("(?:[^"\\]|\\.)*"),"index":(\d+),"deleted":true\}$/;

/**
 * A pack line's id, index and kind read from its head when it has the shape packs.ts writes (JSON.stringify never
 * repeats a key, so the head decides them), without parsing the document; undefined otherwise. Every line is still
 * parsed whole by the second pass.
 */
function packLineHead(line: string): PackLine | undefined {
  const doc = documentHead.exec(line);
  if (doc) return { id: JSON.parse(doc[1]!), version: 0, index: Number(doc[2]), doc: {} };
  const deletion = deletionLine.exec(line);
  if (deletion) return { id: JSON.parse(deletion[1]!), index: Number(deletion[2]), deleted: true };
  return undefined;
}

/** A pack line's index and kind as one number (a map of numbers is the smallest id index). */
function encode(entry: PackLine): number {
  return entry.index * 2 + ("deleted" in entry ? 1 : 0);
}

function indexOf(encoded: number): number {
  return Math.floor(encoded / 2);
}

/** A document file's document, or undefined when a checkpoint removed it after the listing. */
function readDocumentFile(path: string): StoredDoc | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new Error(`document ${path} is not valid JSON`);
  }
}
