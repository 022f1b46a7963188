// Reads a consistent snapshot of a data directory that a running server owns, writing nothing in it: the
// checkpoint (manifest.json's index N, then the document files and packs), then the log's complete lines from
// the oldest retained one, whose lines after N are replayed over the documents. Why that is one index's state
// while the server checkpoints and appends: docs/operations.md "Consistency".

import { ConfigError } from "../../errors.ts";
import { readDirOrEmpty } from "../file/fsutil.ts";
import { collectionFolders, readCheckpointIndex, readCollectionFolder } from "../file/collection_folder.ts";
import type { StoredDoc } from "../doc_types.ts";
import { lineIndex, parseRecord, segmentName } from "../file/log_lines.ts";
import { type LogLine, RetrySnapshot, type SourceSnapshot } from "./source.ts";

const decoder = new TextDecoder();

/**
 * Snapshot of `dir`: `onLine` gets every retained log line in order (the caller writes them out), the result the
 * documents as of the last one. Throws RetrySnapshot when the server's checkpoint or retention moved under it.
 */
export async function readDataDirSnapshot(
  dir: string,
  packed: readonly string[],
  onLine: (line: LogLine) => Promise<void>,
): Promise<SourceSnapshot> {
  if (!await Deno.stat(`${dir}/events`).then((s) => s.isDirectory, () => false)) {
    throw new ConfigError(`${dir} is not a wharf data directory (it has no events/ folder)`);
  }
  const checkpointIndex = await readCheckpointIndex(dir);
  const docs = new Map<string, Map<string, StoredDoc>>();
  try {
    for (const { collection, dir: folder } of collectionFolders(dir)) {
      const found = new Map<string, StoredDoc>();
      readCollectionFolder(folder, found, packed.includes(collection), "reader");
      docs.set(collection, found);
    }
  } catch (err) {
    // A pack that a compaction replaced after the folder was listed.
    if (err instanceof Deno.errors.NotFound) {
      throw new RetrySnapshot("a checkpoint replaced a pack while it was read");
    }
    throw err;
  }
  const snapshot: SourceSnapshot = {
    checkpointIndex,
    firstIndex: 0,
    lastIndex: checkpointIndex,
    docs,
    counters: new Map(),
  };
  await readLog(`${dir}/events`, snapshot, onLine);
  snapshot.counters = readCounters(`${dir}/usage`);
  return snapshot;
}

async function readLog(dir: string, snapshot: SourceSnapshot, onLine: (line: LogLine) => Promise<void>) {
  const listed = [...Deno.readDirSync(dir)].map((e) => e.isFile ? segmentName.exec(e.name) : null)
    .filter((m) => m !== null)
    .map((m) => ({ first: Number(m![1]), name: m![0] })).sort((a, b) => a.first - b.first);
  // Every segment is opened before any is read: retention may unlink one meanwhile, and an open file stays
  // readable. Retention removes the oldest first, so a segment gone before its open means the ones before it
  // are gone too: the log now starts after it.
  let segments: Array<{ first: number; name: string; file: Deno.FsFile }> = [];
  try {
    for (const segment of listed) {
      try {
        segments.push({ ...segment, file: await Deno.open(`${dir}/${segment.name}`, { read: true }) });
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
        for (const s of segments) s.file.close();
        segments = [];
      }
    }
    await readSegments(segments, snapshot, onLine);
  } finally {
    for (const s of segments) s.file.close();
  }
}

async function readSegments(
  segments: Array<{ first: number; name: string; file: Deno.FsFile }>,
  snapshot: SourceSnapshot,
  onLine: (line: LogLine) => Promise<void>,
) {
  let expected = 0;
  for (const [position, segment] of segments.entries()) {
    const bytes = await readToEnd(segment.file);
    const last = position === segments.length - 1;
    let offset = 0;
    let index = segment.first;
    if (expected === 0) {
      if (index > snapshot.checkpointIndex + 1) {
        throw new RetrySnapshot(
          `the log now starts at ${index}, after the checkpoint read (${snapshot.checkpointIndex})`,
        );
      }
      snapshot.firstIndex = index;
    } else if (index !== expected) throw new Error(`the log skips from ${expected - 1} to ${index}`);
    while (offset < bytes.length) {
      const nl = bytes.indexOf(10, offset);
      // The server is writing this line now (or a crash left it torn): not committed, not in the snapshot.
      if (nl < 0) break;
      // A committed line as the event log itself recognises one (log_lines.ts): its index, then a batch record.
      const record = lineIndex(bytes, offset, nl) === index
        ? parseRecord(bytes.subarray(offset, nl))
        : undefined;
      if (!record) {
        if (last) break;
        throw new Error(`log segment ${segment.name} is damaged at index ${index}`);
      }
      if (index > snapshot.checkpointIndex) {
        applyDocs(snapshot.docs, index, (record.Docs ?? []) as WrittenDoc[]);
      }
      const line = decoder.decode(bytes.subarray(offset, nl));
      await onLine({ index, line });
      snapshot.lastIndex = index;
      index++;
      offset = nl + 1;
    }
    expected = index;
  }
  if (snapshot.firstIndex === 0) snapshot.firstIndex = snapshot.lastIndex + 1;
  if (snapshot.lastIndex < snapshot.checkpointIndex) {
    throw new Error(
      `the documents are checkpointed at ${snapshot.checkpointIndex} but the log ends at ${snapshot.lastIndex}`,
    );
  }
}

/** The file's bytes up to its size now (the active segment may grow meanwhile: what follows is left out). */
async function readToEnd(file: Deno.FsFile): Promise<Uint8Array> {
  const out = new Uint8Array((await file.stat()).size);
  let filled = 0;
  for (let n: number | null = 0; n !== null && filled < out.length; filled += n ?? 0) {
    n = await file.read(out.subarray(filled));
  }
  return out.subarray(0, filled);
}

/** A document as a log line records it: collection, id, version, the state (null: removed). */
type WrittenDoc = { c: string; id: string; v: number; d: Record<string, unknown> | null };

/** Replays one log line's documents (full states, so replay over a newer file is idempotent). */
export function applyDocs(
  docs: Map<string, Map<string, StoredDoc>>,
  index: number,
  written: WrittenDoc[],
): void {
  for (const w of written) {
    let collection = docs.get(w.c);
    if (!collection) docs.set(w.c, collection = new Map());
    if (w.d === null) collection.delete(w.id);
    else collection.set(w.id, { id: w.id, version: w.v, index, doc: w.d });
  }
}

/** Usage counters as last flushed (they are approximate by design: docs/storage.md "Usage counters"). */
function readCounters(dir: string): Map<string, Record<string, number>> {
  const counters = new Map<string, Record<string, number>>();
  for (const entry of readDirOrEmpty(dir)) {
    const m = /^([A-Za-z0-9_-]{1,64})\.json$/.exec(entry.name);
    if (!entry.isFile || !m) continue;
    try {
      counters.set(m[1]!, JSON.parse(Deno.readTextFileSync(`${dir}/${entry.name}`)));
    } catch {
      // Replaced or removed while read: counters are approximate, the next backup takes them.
    }
  }
  return counters;
}
