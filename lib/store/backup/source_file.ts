// Reads a consistent snapshot of a data directory that a running server owns, writing nothing in it: the
// checkpoint (manifest.json's index N, then the document files and packs, into the backup's spool), then the log's
// complete lines from the oldest retained one, whose lines after N are replayed over the documents. Why that is
// one index's state while the server checkpoints and appends: docs/operations.md "Consistency".

import { ConfigError } from "../../errors.ts";
import { readDirOrEmpty } from "../file/fsutil.ts";
import { collectionFolders, readCheckpointIndex } from "../file/collection_folder.ts";
import type { StoredDoc } from "../doc_types.ts";
import { lineIndex, parseRecord, segmentName } from "../file/log_lines.ts";
import { fileLineBytes } from "../file/line_reader.ts";
import { type LogLine, RetrySnapshot, type SourceSnapshot } from "./source.ts";
import type { DocSpool } from "./doc_spool.ts";
import { spoolCollectionFolder } from "./checkpoint_spool.ts";

const decoder = new TextDecoder();

/**
 * Snapshot of `dir`: `onLine` gets every retained log line in order (the caller writes them out), the result the
 * documents as of the last one, the checkpointed ones read back from `spool` (empty, and the caller's to close).
 * Throws RetrySnapshot when the server's checkpoint or retention moved under it.
 */
export async function readDataDirSnapshot(
  dir: string,
  packed: readonly string[],
  spool: DocSpool,
  onLine: (line: LogLine) => Promise<void>,
): Promise<SourceSnapshot> {
  if (!await Deno.stat(`${dir}/events`).then((s) => s.isDirectory, () => false)) {
    throw new ConfigError(`${dir} is not a wharf data directory (it has no events/ folder)`);
  }
  const checkpointIndex = await readCheckpointIndex(dir);
  try {
    for (const { collection, dir: folder } of collectionFolders(dir)) {
      await spool.begin(collection);
      await spoolCollectionFolder(folder, packed.includes(collection), spool);
    }
    await spool.end();
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
    collections: spool.collections,
    checkpointed: (collection) => spool.documents(collection),
    written: new Map(),
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
    const last = position === segments.length - 1;
    let index = segment.first;
    if (expected === 0) {
      if (index > snapshot.checkpointIndex + 1) {
        throw new RetrySnapshot(
          `the log now starts at ${index}, after the checkpoint read (${snapshot.checkpointIndex})`,
        );
      }
      snapshot.firstIndex = index;
    } else if (index !== expected) throw new Error(`the log skips from ${expected - 1} to ${index}`);
    // Up to the file's size now (the active segment may grow meanwhile: what follows is left out). A last line
    // without its newline is being written now (or a crash left it torn): not committed, not in the snapshot.
    const size = (await segment.file.stat()).size;
    for await (const bytes of fileLineBytes(segment.file, 0, size, "drop")) {
      // A committed line as the event log itself recognises one (log_lines.ts): its index, then a batch record.
      const record = lineIndex(bytes, 0, bytes.length) === index ? parseRecord(bytes) : undefined;
      if (!record) {
        if (last) break;
        throw new Error(`log segment ${segment.name} is damaged at index ${index}`);
      }
      if (index > snapshot.checkpointIndex) {
        applyDocs(snapshot.written, index, (record.Docs ?? []) as WrittenDoc[]);
      }
      await onLine({ index, line: decoder.decode(bytes) });
      snapshot.lastIndex = index;
      index++;
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

/** A document as a log line records it: collection, id, version, the state (null: removed). */
type WrittenDoc = { c: string; id: string; v: number; d: Record<string, unknown> | null };

/**
 * Records one log line's documents over those written before it (full states, so they replace a newer file's
 * state as well: replay is idempotent).
 */
export function applyDocs(
  docs: Map<string, Map<string, StoredDoc | null>>,
  index: number,
  written: WrittenDoc[],
): void {
  for (const w of written) {
    let collection = docs.get(w.c);
    if (!collection) docs.set(w.c, collection = new Map());
    collection.set(w.id, w.d === null ? null : { id: w.id, version: w.v, index, doc: w.d });
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
