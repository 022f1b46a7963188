// Packed checkpoints for collections of many small documents written once per login (auth tokens): each
// checkpoint writes the collection's changed documents as one NDJSON file instead of one file per document.
//
// Why: creating, fsyncing and renaming a file per new token cost ~23 % of wharf's CPU under LDAP login load
// (one file per login); one file per checkpoint costs a few µs per document. A packed folder holds
// `base-<index>.ndjson` (every live document as of that index, written by a compaction) and
// `delta-<index>.ndjson` files (the documents changed up to that index, deletions as tombstones). On load the
// highest index wins per id, so a crash between any two steps leaves a readable, correct folder.

import { atomicWrite } from "./fsutil.ts";
import type { StoredDoc } from "../doc_types.ts";

/** A pack line: a stored document, or a deletion at `index`. */
export type PackLine = StoredDoc | { id: string; index: number; deleted: true };

/** A pack file of a folder: a base (every live document) or a delta (the changes) as of `index`. */
export interface PackFile {
  name: string;
  kind: "base" | "delta";
  index: number;
}

const packName = /^(base|delta)-(\d{16})\.ndjson$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/**
 * Compaction: deltas are folded into a new base once their bytes reach the base's (so each change is rewritten
 * a bounded number of times on average), or once there are so many that loading them would be slow.
 */
const minCompactBytes = 256 * 1024;
const maxDeltaFiles = 4096;
const chunkLines = 2000;

export function isPackFile(name: string): boolean {
  return packName.test(name);
}

/**
 * The packs among a folder's entries (`names`) that hold its documents, in the order they are read (on an id the
 * highest index wins, and of equal ones the later pack): the newest base and what follows it. The older packs are
 * `obsolete` (the next compaction removes them).
 */
export function packsToRead(names: string[]): { read: PackFile[]; base?: PackFile; obsolete: string[] } {
  const packs = names.map((n) => ({ name: n, m: packName.exec(n) })).filter((p) => p.m)
    .map((p) => ({ name: p.name, kind: p.m![1] as "base" | "delta", index: Number(p.m![2]) }))
    .sort((a, b) => a.index - b.index || (a.kind === "base" ? -1 : 1));
  const base = packs.filter((p) => p.kind === "base").at(-1);
  const stale = (p: PackFile) => base && (p.index < base.index || (p.index === base.index && p !== base));
  return {
    read: packs.filter((p) => !stale(p)),
    ...(base ? { base } : {}),
    obsolete: packs.filter(stale).map((p) => p.name),
  };
}

/** One line of the pack at `path`, parsed. */
export function parsePackLine(line: string, path: string): PackLine {
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`pack ${path} holds a line that is not valid JSON`);
  }
}

function fileName(kind: "base" | "delta", index: number): string {
  return `${kind}-${String(index).padStart(16, "0")}.ndjson`;
}

/** What a packed folder holds on disk, kept current so a checkpoint can decide when to compact. */
export class PackFolder {
  readonly dir: string;
  #base: { name: string; bytes: number } | undefined;
  #deltas: { name: string; bytes: number }[] = [];
  /** Files a base made obsolete (older packs, per-document files): removed at the next compaction. */
  #obsolete: string[] = [];

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Reads the folder's packs (`names`: every entry of the folder) into `docs`, which already holds the
   * per-document files (`perDocFiles`, left from before the collection was packed); the highest index wins
   * per id. With a base present those files are older than it and are dropped. Either way the next
   * compaction removes them.
   */
  load(names: string[], docs: Map<string, StoredDoc>, perDocFiles: string[]): void {
    const { read, base, obsolete } = packsToRead(names);
    const seen = new Map<string, number>();
    this.#obsolete.push(...perDocFiles, ...obsolete);
    if (base) docs.clear();
    else {
      for (const [id, stored] of docs) seen.set(id, stored.index);
    }
    for (const p of read) {
      const raw = Deno.readFileSync(`${this.dir}/${p.name}`);
      const bytes = raw.length;
      const text = decoder.decode(raw);
      if (p.kind === "base") this.#base = { name: p.name, bytes };
      else this.#deltas.push({ name: p.name, bytes });
      for (const line of text.split("\n")) {
        if (line === "") continue;
        const entry = parsePackLine(line, `${this.dir}/${p.name}`);
        if ((seen.get(entry.id) ?? -1) > entry.index) continue;
        seen.set(entry.id, entry.index);
        if ("deleted" in entry) docs.delete(entry.id);
        else docs.set(entry.id, entry);
      }
    }
  }

  /**
   * Writes the changed documents (`changed`: id → current state, undefined when deleted) as of `upTo`,
   * durably (temp, fsync, rename); the caller fsyncs the folder. When the deltas outweigh the base it writes
   * a new base of `live` instead; `afterFolderSync` then removes what that base made obsolete.
   */
  async write(
    upTo: number,
    changed: Map<string, StoredDoc | undefined>,
    live: () => Iterable<StoredDoc>,
  ): Promise<{ afterFolderSync?: () => Promise<void> }> {
    const deltaBytes = this.#deltas.reduce((n, d) => n + d.bytes, 0);
    const compact = this.#deltas.length >= maxDeltaFiles ||
      deltaBytes >= Math.max(minCompactBytes, this.#base?.bytes ?? 0);
    const name = fileName(compact ? "base" : "delta", upTo);
    const lines = compact ? storedLines(live()) : changedLines(changed, upTo);
    const written = { bytes: 0 };
    await atomicWrite(`${this.dir}/${name}`, packChunks(lines, written), { syncFolder: false });
    if (!compact) {
      this.#deltas.push({ name, bytes: written.bytes });
      return {};
    }
    const obsolete = [
      ...this.#obsolete,
      ...this.#deltas.map((d) => d.name),
      ...(this.#base && this.#base.name !== name ? [this.#base.name] : []),
    ];
    this.#base = { name, bytes: written.bytes };
    this.#deltas = [];
    // Kept as obsolete until removed: if this checkpoint fails before the removal, the next compaction does it.
    this.#obsolete = obsolete;
    return {
      // Only once the new base's name is durable may the files it replaces go.
      afterFolderSync: async () => {
        for (const n of obsolete) await Deno.remove(`${this.dir}/${n}`).catch(() => {});
        this.#obsolete = this.#obsolete.filter((n) => !obsolete.includes(n));
      },
    };
  }

  /**
   * Writes an empty folder's first pack from `batches`, read as it is written (a restore's documents, one
   * archive entry at a time): the delta at `upTo` a first checkpoint of the same documents writes, so never more
   * than a batch is held. The caller fsyncs the folder. Returns the documents written.
   */
  async writeFirst(upTo: number, batches: AsyncIterable<StoredDoc[]>): Promise<number> {
    const name = fileName("delta", upTo);
    const written = { bytes: 0 };
    let documents = 0;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for await (const batch of batches) {
        documents += batch.length;
        yield* packChunks(storedLines(batch), written);
      }
    }
    await atomicWrite(`${this.dir}/${name}`, chunks(), { syncFolder: false });
    this.#deltas.push({ name, bytes: written.bytes });
    return documents;
  }
}

/**
 * Pack lines serialized a slice at a time between file writes: a base of 100,000 tokens (~27 MB) then neither
 * blocks the event loop for its whole length nor holds several copies of itself in memory.
 */
function* packChunks(lines: Iterable<string>, written: { bytes: number }): Generator<Uint8Array> {
  let slice: string[] = [];
  const flush = () => {
    const bytes = encoder.encode(slice.join("\n") + "\n");
    written.bytes += bytes.length;
    slice = [];
    return bytes;
  };
  for (const line of lines) {
    slice.push(line);
    if (slice.length === chunkLines) yield flush();
  }
  if (slice.length) yield flush();
}

function* storedLines(docs: Iterable<StoredDoc>): Generator<string> {
  for (const stored of docs) yield JSON.stringify(stored);
}

/** A delta's lines: each changed document, a deletion as a tombstone at `upTo`. */
function* changedLines(changed: Map<string, StoredDoc | undefined>, upTo: number): Generator<string> {
  for (const [id, stored] of changed) yield JSON.stringify(stored ?? { id, index: upTo, deleted: true });
}
