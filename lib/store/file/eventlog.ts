// The durable NDJSON event log: the commit point of every mutation, in segments under data/events/.
//
// One line = one batch {"Index":N,"Events":[...], ...recovery members}. Indexes are consecutive and never
// reused. append() resolves only after the line is fsynced; concurrent appends share one fsync.

import { ensureDir, removeTempFiles, syncDir, writeAll } from "./fsutil.ts";
import {
  type BatchBody,
  type CommitLog,
  type CommittedBatch,
  defaultLogOptions,
  type EventLogOptions,
  LogClosedError,
  type LogCursor,
  type LogRecord,
} from "../commit_log.ts";
import { LogFollowers } from "../log_followers.ts";
import { concatBytes } from "../../bytes.ts";
import { lineIndex, parseRecord, segmentFileName, segmentName } from "./log_lines.ts";

interface Segment {
  first: number;
  path: string;
  bytes: number;
  /** Sparse [index, byte offset] pairs, ascending; built on demand for closed segments. */
  sparse: Array<[number, number]> | undefined;
}

interface PendingAppend {
  build: (index: number) => BatchBody;
  apply: ((batch: CommittedBatch) => void) | undefined;
  resolve: (batch: CommittedBatch) => void;
  reject: (err: unknown) => void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const sparseEvery = 256 * 1024;
const maxGroup = 4096;

export class EventLog implements CommitLog {
  readonly dir: string;
  readonly options: EventLogOptions;
  #segments: Segment[] = [];
  #file: Deno.FsFile | undefined;
  #lastIndex = 0;
  #pending: PendingAppend[] = [];
  #writing: Promise<void> | undefined;
  #failed: unknown;
  #closed = false;
  readonly #followers = new LogFollowers();
  #lastSparseOffset = 0;

  private constructor(dir: string, options: EventLogOptions) {
    this.dir = dir;
    this.options = options;
  }

  /** Opens (or creates) the log in `dir`, cutting a torn last line. */
  static async open(dir: string, options: Partial<EventLogOptions> = {}): Promise<EventLog> {
    const log = new EventLog(dir, { ...defaultLogOptions, ...options });
    await ensureDir(dir);
    await removeTempFiles(dir);
    await log.#load();
    return log;
  }

  /** Index of the newest durable batch (0 when nothing was ever written). */
  get lastIndex(): number {
    return this.#lastIndex;
  }

  /** Index of the oldest retained batch, or lastIndex + 1 when the log holds none. */
  get firstIndex(): number {
    const first = this.#segments[0];
    return first ? Math.min(first.first, this.#lastIndex + 1) : this.#lastIndex + 1;
  }

  get sizeBytes(): number {
    return this.#segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  get segmentCount(): number {
    return this.#segments.length;
  }

  async #load(): Promise<void> {
    const found: Segment[] = [];
    for await (const entry of Deno.readDir(this.dir)) {
      const m = entry.isFile ? segmentName.exec(entry.name) : null;
      if (!m) continue;
      const path = `${this.dir}/${entry.name}`;
      found.push({ first: Number(m[1]), path, bytes: (await Deno.stat(path)).size, sparse: undefined });
    }
    found.sort((a, b) => a.first - b.first);
    if (found.length === 0) {
      found.push(await this.#createSegment(1));
    }
    this.#segments = found;
    const active = found[found.length - 1]!;
    await this.#recoverActive(active);
    this.#file = await Deno.open(active.path, { write: true, append: true });
  }

  /** Scans the active segment, truncating an incomplete or unparsable tail. */
  async #recoverActive(seg: Segment): Promise<void> {
    const bytes = await Deno.readFile(seg.path);
    const sparse: Array<[number, number]> = [];
    let offset = 0;
    let expected = seg.first;
    let lastSparse = -Infinity;
    while (offset < bytes.length) {
      const nl = bytes.indexOf(10, offset);
      if (nl < 0) break;
      const index = lineIndex(bytes, offset, nl);
      if (index !== expected || parseRecord(bytes.subarray(offset, nl)) === undefined) break;
      if (offset - lastSparse >= sparseEvery) {
        sparse.push([index, offset]);
        lastSparse = offset;
      }
      expected++;
      offset = nl + 1;
    }
    if (offset < bytes.length) {
      await Deno.truncate(seg.path, offset);
      const f = await Deno.open(seg.path, { write: true });
      await f.sync();
      f.close();
    }
    seg.bytes = offset;
    seg.sparse = sparse;
    this.#lastSparseOffset = sparse.length ? sparse[sparse.length - 1]![1] : -Infinity;
    this.#lastIndex = expected - 1;
  }

  async #createSegment(first: number): Promise<Segment> {
    const path = `${this.dir}/${segmentFileName(first)}`;
    const f = await Deno.open(path, { write: true, create: true });
    await f.sync();
    f.close();
    await syncDir(this.dir);
    return { first, path, bytes: 0, sparse: [] };
  }

  /**
   * Appends one batch. `build` receives the batch's Index and returns its body; `apply` runs
   * synchronously, in index order, once the line is durable and before the promise resolves.
   */
  append(
    build: (index: number) => BatchBody,
    apply?: (batch: CommittedBatch) => void,
  ): Promise<CommittedBatch> {
    if (this.#closed) return Promise.reject(new LogClosedError());
    if (this.#failed) return Promise.reject(new LogClosedError("the event log failed and accepts no writes"));
    return new Promise((resolve, reject) => {
      this.#pending.push({ build, apply, resolve, reject });
      if (!this.#writing) this.#writing = this.#drain();
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const group = this.#pending.splice(0, maxGroup);
        await this.#commitGroup(group);
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #commitGroup(group: PendingAppend[]): Promise<void> {
    const accepted: Array<{ p: PendingAppend; batch: CommittedBatch; offset: number }> = [];
    const lines: string[] = [];
    const active = this.#segments[this.#segments.length - 1]!;
    let index = this.#lastIndex;
    let size = active.bytes;
    for (const p of group) {
      let line: string;
      let record: LogRecord;
      try {
        const body = p.build(index + 1);
        record = { Index: index + 1, ...body };
        line = JSON.stringify(record) + "\n";
      } catch (err) {
        p.reject(err);
        continue;
      }
      index++;
      lines.push(line);
      accepted.push({ p, batch: { index, record }, offset: size });
      size += byteLength(line);
    }
    if (accepted.length === 0) return;
    try {
      const bytes = encoder.encode(lines.join(""));
      await writeAll(this.#file!, bytes);
      await this.#file!.syncData();
    } catch (err) {
      this.#failed = err;
      for (const a of accepted) a.p.reject(err);
      for (const p of this.#pending.splice(0)) p.reject(err);
      return;
    }
    active.bytes = size;
    for (const a of accepted) {
      if (a.offset - this.#lastSparseOffset >= sparseEvery) {
        active.sparse?.push([a.batch.index, a.offset]);
        this.#lastSparseOffset = a.offset;
      }
    }
    this.#lastIndex = index;
    for (const a of accepted) {
      try {
        a.p.apply?.(a.batch);
      } finally {
        this.#followers.notify(a.batch);
        a.p.resolve(a.batch);
      }
    }
    if (
      active.bytes >= this.options.segmentBytes || index - active.first + 1 >= this.options.segmentIndexes
    ) {
      await this.#roll();
    }
  }

  async #roll(): Promise<void> {
    const next = await this.#createSegment(this.#lastIndex + 1);
    const old = this.#file!;
    this.#file = await Deno.open(next.path, { write: true, append: true });
    old.close();
    this.#segments.push(next);
    this.#lastSparseOffset = -Infinity;
  }

  /** Calls `listener` with every batch after it becomes durable, in index order; returns unsubscribe. */
  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    return this.#followers.subscribe(listener);
  }

  /** Registers a reader position that retention respects (within pinBytes). */
  openCursor(next: number): LogCursor {
    return this.#followers.openCursor(next);
  }

  /**
   * Yields the durable lines with Index >= `from`, in order, as raw JSON text (no newline) and Index.
   * An index older than the oldest retained batch starts at the oldest. Ends at the newest durable batch.
   */
  async *read(from: number, chunkBytes = 1 << 20): AsyncGenerator<{ index: number; line: string }> {
    let next = Math.max(from, 1);
    while (next <= this.#lastIndex) {
      const segIdx = this.#segmentFor(next);
      if (segIdx < 0) return;
      const seg = this.#segments[segIdx]!;
      if (next < seg.first) next = seg.first;
      let file: Deno.FsFile;
      try {
        file = await Deno.open(seg.path, { read: true });
      } catch (err) {
        if (err instanceof Deno.errors.NotFound && this.#segments[0] !== seg) continue; // retention removed it
        throw err;
      }
      try {
        let [index, offset] = await this.#seekPoint(seg, next);
        await file.seek(offset, Deno.SeekMode.Start);
        const buf = new Uint8Array(chunkBytes);
        // Pieces of a line that spans chunks; joined once, when its newline arrives.
        let partial: Uint8Array[] = [];
        let partialBytes = 0;
        // seg.bytes only counts durable bytes, and grows while this segment is the active one.
        while (offset < seg.bytes) {
          const n = await file.read(buf.subarray(0, Math.min(buf.length, seg.bytes - offset)));
          if (n === null || n === 0) break;
          offset += n;
          const chunk = buf.subarray(0, n);
          let start = 0;
          for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
            if (index >= next) {
              let bytes: Uint8Array = chunk.subarray(start, nl);
              if (partialBytes) bytes = concatBytes([...partial, bytes]);
              yield { index, line: decoder.decode(bytes) };
              next = index + 1;
            }
            partial = [];
            partialBytes = 0;
            index++;
            start = nl + 1;
          }
          if (start < n) {
            // Copy: `buf` is reused by the next read.
            partial.push(chunk.slice(start));
            partialBytes += n - start;
          }
        }
        const after = this.#segments[this.#segments.indexOf(seg) + 1];
        if (after && next < after.first) next = after.first;
      } finally {
        file.close();
      }
    }
  }

  /** Position of the segment holding `index`, or the oldest one after it; -1 if none. */
  #segmentFor(index: number): number {
    const segs = this.#segments;
    let lo = 0;
    let hi = segs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (segs[mid]!.first <= index) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? (segs.length ? 0 : -1) : found;
  }

  /** The closest known [index, offset] at or before `index` in `seg`, scanning the segment once if needed. */
  async #seekPoint(seg: Segment, index: number): Promise<[number, number]> {
    if (!seg.sparse) seg.sparse = await buildSparse(seg);
    let best: [number, number] = [seg.first, 0];
    for (const point of seg.sparse) {
      if (point[0] > index) break;
      best = point;
    }
    return best;
  }

  /**
   * Deletes whole old segments beyond the retention limits, never the active one and never one with
   * an index above `checkpointIndex` (documents not yet written past it). Returns how many were removed.
   */
  applyRetention(checkpointIndex: number): Promise<number> {
    // One at a time: two runs would both pick the oldest segment and drop two list entries for one file.
    const run = this.#retention.then(() => this.#retain(checkpointIndex));
    this.#retention = run.catch(() => {});
    return run;
  }

  #retention: Promise<unknown> = Promise.resolve();

  async #retain(checkpointIndex: number): Promise<number> {
    const { retainIndexes, retainBytes, pinBytes } = this.options;
    let total = this.sizeBytes;
    const slowest = this.#followers.slowestCursor();
    let pinned = 0;
    let removed = 0;
    while (this.#segments.length > 1) {
      const seg = this.#segments[0]!;
      const last = this.#segments[1]!.first - 1;
      if (last > checkpointIndex) break;
      const overCount = last <= this.#lastIndex - retainIndexes;
      const overBytes = total > retainBytes;
      if (!overCount && !overBytes) break;
      if (last >= slowest) {
        pinned += seg.bytes;
        if (pinned <= pinBytes) break;
      }
      await Deno.remove(seg.path).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
      this.#segments.shift();
      total -= seg.bytes;
      removed++;
    }
    if (removed) await syncDir(this.dir);
    return removed;
  }

  /** Waits for queued appends, then closes the file; later appends are rejected. */
  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#writing) await this.#writing;
    this.#closed = true;
    this.#followers.unsubscribeAll();
    this.#file?.close();
    this.#file = undefined;
  }
}

function byteLength(s: string): number {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) {
      ascii = false;
      break;
    }
  }
  return ascii ? s.length : encoder.encode(s).length;
}

async function buildSparse(seg: Segment): Promise<Array<[number, number]>> {
  const sparse: Array<[number, number]> = [];
  const bytes = await Deno.readFile(seg.path);
  let offset = 0;
  let index = seg.first;
  let lastSparse = -Infinity;
  while (offset < bytes.length) {
    const nl = bytes.indexOf(10, offset);
    if (nl < 0) break;
    if (offset - lastSparse >= sparseEvery) {
      sparse.push([index, offset]);
      lastSparse = offset;
    }
    index++;
    offset = nl + 1;
  }
  return sparse;
}
