// One stream connection: `{}`, then the backlog from disk, then live batches from a bounded queue; on overflow
// it falls back to reading the log from its cursor and rejoins live when caught up. The body is pull-based.

import type { EventLog } from "../../lib/store/mod.ts";
import type { LogCursor } from "../../lib/store/eventlog.ts";
import type { EventMatcher } from "./stream_filter.ts";
import { frameFor, type PreparedBatch, prepareLine, type StreamHub } from "./stream_hub.ts";

export interface SubscriberOptions {
  log: EventLog;
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
}

const encoder = new TextEncoder();
const heartbeatBytes = () => encoder.encode("{}\n");
/** Frames available at once are sent together up to this size (one socket write instead of many). */
const coalesceBytes = 256 * 1024;
const diskChunkBytes = 256 * 1024;

export class StreamSubscriber {
  readonly body: ReadableStream<Uint8Array>;
  readonly #o: SubscriberOptions;
  /** The next Index this connection may deliver: everything below it was handled. */
  #cursor: number;
  /** The queue holds every live batch >= liveFrom (reset on overflow). */
  #liveFrom: number;
  #queue: PreparedBatch[] = [];
  #queueHead = 0;
  #queueBytes = 0;
  #reader: AsyncGenerator<{ index: number; line: string }> | undefined;
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
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: (controller) => this.#pull(controller),
      cancel: () => this.#finish(),
    }, { highWaterMark: 1 });
  }

  /** Ends the body after the current frame (shutdown, revoked token). */
  end(): void {
    if (this.#ending) return;
    this.#ending = true;
    if (this.#pulling) this.#wake?.();
    else this.#closeBody();
  }

  get cursor(): number {
    return this.#cursor;
  }

  #offer(batch: PreparedBatch): void {
    if (this.#finished || batch.index < this.#cursor) return;
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
    try {
      const chunk = await this.#produce();
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

  /** The next bytes to send (one or more complete lines), or undefined to end the body. */
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
          // A live batch's full frame is encoded once for every subscriber; a batch read from disk is this
          // subscriber's alone, so its text is joined with its neighbours and encoded once per chunk.
          const part = frame !== "all"
            ? frame + "\n"
            : batch.shared
            ? batch.fullFrameBytes
            : batch.fullFrame + "\n";
          parts.push(part);
          size += part.length;
          this.#lastWrite = Date.now();
          if (size >= coalesceBytes) return joinParts(parts);
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
    if (this.#cursor < this.#liveFrom) {
      this.#reader ??= this.#o.log.read(this.#cursor, diskChunkBytes);
      const item = await this.#reader.next();
      if (!item.done) {
        this.#advance(item.value.index + 1);
        return prepareLine(item.value.index, item.value.line);
      }
      this.#reader = undefined;
      // The log ended below liveFrom only if retention removed what was left: move on (§10).
      if (this.#cursor < this.#liveFrom) this.#advance(this.#liveFrom);
    } else if (this.#reader) {
      await this.#reader.return(undefined);
      this.#reader = undefined;
    }
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
    this.#wake?.();
    const reader = this.#reader;
    this.#reader = undefined;
    reader?.return(undefined).catch(() => {});
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
  let total = 0;
  for (const b of bytes) total += b.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const b of bytes) {
    out.set(b, offset);
    offset += b.length;
  }
  return out;
}
