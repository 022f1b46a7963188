// One stream connection: `{}`, then the backlog from disk, then live batches from a bounded queue; on overflow
// it falls back to reading the log from its cursor and rejoins live when caught up. The body is pull-based and
// hands out pieces of at most streamChunkBytes, so a reader that stops reading holds little (docs/events.md).

import type { CommitLog } from "../../lib/store/mod.ts";
import type { LogCursor } from "../../lib/store/commit_log.ts";
import { concatBytes } from "../../lib/bytes.ts";
import type { EventMatcher } from "./stream_filter.ts";
import { frameFor, type PreparedBatch, splitBytes, streamChunkBytes, type StreamHub } from "./stream_hub.ts";

export interface SubscriberOptions {
  log: CommitLog;
  hub: StreamHub;
  /** The `index` query value: 0 = oldest retained, N = first batch >= N, negative = from now. */
  startIndex: number;
  matcher: EventMatcher;
  everything: boolean;
  /** Subscribers with the same filterKey share each live batch's filtering (stream_filter.ts filterKey). */
  filterKey?: string;
  heartbeatMs: number;
  queueBatches: number;
  queueBytes: number;
  /** Whether the subscriber's token has expired (checked on each data frame and heartbeat tick). */
  expired: () => boolean;
  onError: (err: unknown) => void;
  /** Called once when the connection is over, whatever ended it. */
  onClose: () => void;
  /** Called for each batch whose frame goes out (for metrics). */
  onFrame?: () => void;
}

const encoder = new TextEncoder();
const heartbeatBytes = () => encoder.encode("{}\n");
/** Read size of the disk reader of a lagging subscriber (its buffer lives as long as the reader). */
const diskChunkBytes = 64 * 1024;
/** A lagging subscriber whose body has not been pulled for this long closes its disk reader (buffer, file). */
const idleReaderMs = 1000;

export class StreamSubscriber {
  readonly body: ReadableStream<Uint8Array>;
  readonly #o: SubscriberOptions;
  /** The next Index this connection may deliver: everything below it was handled. */
  #cursor: number;
  /**
   * Live batches >= liveFrom come from the queue; below it, from the log. While the cursor is below liveFrom the
   * subscriber lags: it queues nothing and only moves liveFrom, until the disk reader catches up.
   */
  #liveFrom: number;
  #queue: PreparedBatch[] = [];
  #queueHead = 0;
  #queueBytes = 0;
  #reader: AsyncGenerator<{ index: number; line: string }> | undefined;
  /** Whether the current disk reader has yielded anything (a fresh one that yields nothing means the log ended). */
  #readerYielded = false;
  #readerTimer: ReturnType<typeof setTimeout> | undefined;
  #lastPull = 0;
  /**
   * The rest of a frame bigger than one chunk (shared pieces of a batch, or views of this reader's bytes); a
   * private list whose sent entries are cleared, so a reader stalled inside a frame keeps only what it still owes.
   */
  #carry: Array<Uint8Array | undefined> | undefined;
  #carryNext = 0;
  #pin: LogCursor;
  #removeSink: () => void;
  #helloSent = false;
  #lastWrite = 0;
  #ending = false;
  #finished = false;
  #pulling = false;
  #wake: (() => void) | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  constructor(options: SubscriberOptions) {
    this.#o = options;
    const { log } = options;
    // Registration and the start position are fixed together, synchronously: nothing committed after
    // this point can be missed, and nothing below the cursor is delivered twice.
    this.#liveFrom = log.lastIndex + 1;
    if (options.startIndex < 0) this.#cursor = log.lastIndex + 1;
    else this.#cursor = Math.max(options.startIndex, log.firstIndex, 1);
    this.#removeSink = options.hub.add((b) => this.#offer(b));
    this.#pin = log.openCursor(this.#cursor);
    // highWaterMark 0: nothing is produced ahead of the HTTP layer asking for it, so a reader that stops
    // reading leaves no chunk waiting in this stream's queue.
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: (controller) => this.#pull(controller),
      cancel: () => this.#finish(),
    }, { highWaterMark: 0 });
  }

  /** Ends the body after the current frame (shutdown, revoked token). */
  end(): void {
    if (this.#ending) return;
    this.#ending = true;
    if (this.#pulling) this.#wake?.();
    else if (this.#carry === undefined) this.#closeBody();
    // else: the frame being sent is completed by the next pulls, then the body ends.
  }

  get cursor(): number {
    return this.#cursor;
  }

  /** Whether it reads the log from disk (it started behind, or its queue overflowed) instead of live batches. */
  get lagging(): boolean {
    return this.#cursor < this.#liveFrom;
  }

  #offer(batch: PreparedBatch): void {
    if (this.#finished || batch.index < this.#cursor) return;
    if (this.#cursor < this.#liveFrom) {
      // Lagging: the log has this batch; the reader gets there from disk.
      this.#liveFrom = batch.index + 1;
      return;
    }
    this.#queue.push(batch);
    this.#queueBytes += batch.bytes;
    const queued = this.#queue.length - this.#queueHead;
    if (queued > this.#o.queueBatches || this.#queueBytes > this.#o.queueBytes) {
      // Overflow: drop the in-memory copy; this subscriber reads the log from its cursor instead.
      this.#queue = [];
      this.#queueHead = 0;
      this.#queueBytes = 0;
      this.#liveFrom = batch.index + 1;
    }
    this.#wake?.();
  }

  async #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    this.#pulling = true;
    this.#lastPull = Date.now();
    try {
      const chunk = this.#nextPiece() ?? await this.#produce();
      if (this.#finished) return; // cancelled by the client meanwhile
      if (chunk === undefined) this.#closeBody();
      else controller.enqueue(chunk);
    } catch (err) {
      this.#o.onError(err);
      this.#closeBody();
    } finally {
      this.#pulling = false;
    }
  }

  /** The next piece of a frame in progress, if any. */
  #nextPiece(): Uint8Array | undefined {
    const carry = this.#carry;
    if (carry === undefined) return undefined;
    const piece = carry[this.#carryNext]!;
    carry[this.#carryNext++] = undefined;
    if (this.#carryNext >= carry.length) {
      this.#carry = undefined;
      this.#carryNext = 0;
    }
    return piece;
  }

  /** Sends `pieces` (one frame) from the next pull on; returns the first when nothing else is pending. */
  #startCarry(pieces: readonly Uint8Array[], parts: Array<string | Uint8Array>): Uint8Array | undefined {
    this.#carry = [...pieces];
    this.#carryNext = 0;
    return parts.length ? joinParts(parts) : this.#nextPiece();
  }

  /** The next bytes to send (one or more complete lines, or the first piece of a big one), or undefined to end. */
  async #produce(): Promise<Uint8Array | undefined> {
    if (!this.#helloSent) {
      this.#helloSent = true;
      this.#lastWrite = Date.now();
      return heartbeatBytes();
    }
    const parts: Array<string | Uint8Array> = [];
    let size = 0;
    while (true) {
      if (this.#ending || this.#finished) return joinParts(parts);
      const batch = await this.#nextBatch();
      if (this.#ending || this.#finished) return joinParts(parts);
      if (batch) {
        const { matcher, everything, filterKey } = this.#o;
        const frame = filterKey === undefined
          ? frameFor(batch, matcher, everything)
          : batch.frameForFilter(filterKey, () => frameFor(batch, matcher, everything));
        if (frame !== undefined) {
          if (this.#o.expired()) {
            this.#ending = true;
            return joinParts(parts);
          }
          this.#lastWrite = Date.now();
          this.#o.onFrame?.();
          if (frame === "all" && batch.shared) {
            // A shared batch's full frame is encoded (and cut) once for every subscriber.
            const pieces = batch.fullFramePieces;
            const only = pieces.length === 1 ? pieces[0]! : undefined;
            if (only === undefined || size + only.length > streamChunkBytes) {
              return this.#startCarry(pieces, parts);
            }
            parts.push(only);
            size += only.length;
          } else {
            // Text of this filter: joined with its neighbours and encoded once per chunk. A frame too big for one
            // chunk goes out in pieces, shared by the subscribers with the same filter when the batch is shared.
            const text = (frame === "all" ? batch.fullFrame : frame) + "\n";
            if (size + text.length > streamChunkBytes) {
              if (batch.shared && filterKey !== undefined && text.length > streamChunkBytes) {
                return this.#startCarry(batch.framePiecesForFilter(filterKey, text), parts);
              }
              const bytes = encoder.encode(text);
              if (size + bytes.length > streamChunkBytes) {
                return this.#startCarry(splitBytes(bytes, false), parts);
              }
              parts.push(bytes);
              size += bytes.length;
            } else {
              parts.push(text);
              size += text.length;
            }
          }
          if (size >= streamChunkBytes) return joinParts(parts);
        }
        if (parts.length === 0 && Date.now() - this.#lastWrite >= this.#o.heartbeatMs) return this.#tick();
        continue;
      }
      if (parts.length) return joinParts(parts);
      const remaining = this.#o.heartbeatMs - (Date.now() - this.#lastWrite);
      if (remaining <= 0) return this.#tick();
      await this.#wait(remaining);
    }
  }

  #tick(): Uint8Array | undefined {
    if (this.#o.expired()) {
      this.#ending = true;
      return undefined;
    }
    this.#lastWrite = Date.now();
    return heartbeatBytes();
  }

  /** The next batch at or above the cursor, from disk or the live queue; undefined when none is ready. */
  async #nextBatch(): Promise<PreparedBatch | undefined> {
    while (this.#cursor < this.#liveFrom) {
      if (this.#reader === undefined) {
        this.#reader = this.#o.log.read(this.#cursor, diskChunkBytes);
        this.#readerYielded = false;
        this.#readerTimer ??= setTimeout(() => this.#closeIdleReader(), idleReaderMs);
      }
      const item = await this.#reader.next();
      if (this.#finished) return undefined;
      if (!item.done) {
        this.#readerYielded = true;
        this.#advance(item.value.index + 1);
        return this.#o.hub.fromLog(item.value.index, item.value.line);
      }
      const yielded = this.#readerYielded;
      this.#reader = undefined;
      // A reader ends at the newest batch it saw; one committed since is read by a new reader. A fresh reader
      // that finds nothing below liveFrom means retention removed what was left: move on
      // (docs/events.md#resuming-after-a-disconnect).
      if (!yielded || this.#cursor > this.#o.log.lastIndex) {
        this.#advance(Math.max(this.#cursor, this.#liveFrom));
      }
    }
    if (this.#reader) await this.#closeReader();
    while (this.#queueHead < this.#queue.length) {
      const b = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead++] = undefined as unknown as PreparedBatch;
      this.#queueBytes -= b.bytes;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#queueHead);
        this.#queueHead = 0;
      }
      if (b.index < this.#cursor) continue;
      this.#advance(b.index + 1);
      return b;
    }
    return undefined;
  }

  /** Closes the disk reader of a subscriber whose body is not being read (its buffer and open file go). */
  #closeIdleReader(): void {
    this.#readerTimer = undefined;
    if (this.#reader === undefined || this.#finished) return;
    const idle = Date.now() - this.#lastPull;
    if (this.#pulling || idle < idleReaderMs) {
      this.#readerTimer = setTimeout(
        () => this.#closeIdleReader(),
        idleReaderMs - (this.#pulling ? 0 : idle),
      );
      return;
    }
    this.#closeReader().catch(() => {});
  }

  async #closeReader(): Promise<void> {
    const reader = this.#reader;
    this.#reader = undefined;
    clearTimeout(this.#readerTimer);
    this.#readerTimer = undefined;
    await reader?.return(undefined);
  }

  #advance(next: number): void {
    this.#cursor = next;
    this.#pin.next = next;
  }

  #wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  #closeBody(): void {
    this.#finish();
    try {
      this.#controller?.close();
    } catch {
      // already closed or cancelled by the client
    }
  }

  /** Frees everything this connection holds: the hub sink, the log pin, the disk reader, timers. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#ending = true;
    this.#removeSink();
    this.#pin.release();
    this.#queue = [];
    this.#queueHead = 0;
    this.#carry = undefined;
    this.#wake?.();
    this.#closeReader().catch(() => {});
    this.#o.onClose();
  }
}

/** One chunk from complete lines: runs of text are joined and encoded once; a lone shared frame is not copied. */
function joinParts(parts: Array<string | Uint8Array>): Uint8Array | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && typeof parts[0] !== "string") return parts[0];
  const bytes: Uint8Array[] = [];
  let text: string[] = [];
  for (const p of parts) {
    if (typeof p === "string") text.push(p);
    else {
      if (text.length) bytes.push(encoder.encode(text.join("")));
      text = [];
      bytes.push(p);
    }
  }
  if (text.length) bytes.push(encoder.encode(text.join("")));
  if (bytes.length === 1) return bytes[0];
  return concatBytes(bytes);
}
