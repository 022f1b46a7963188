// One listener on the event log for every stream: each live batch is prepared (sanitized, serialized per event)
// once and shared by all subscribers, whose own work is then matching and string concatenation.

import type { CommitLog, CommittedBatch, StreamEvent } from "../../lib/store/mod.ts";
import type { EventMatcher } from "./stream_filter.ts";

const encoder = new TextEncoder();

/**
 * The most bytes a stream hands the HTTP layer at once. A stalled reader's response buffers (and the ReadableStream
 * queue) then hold a few small pieces, never a whole multi-megabyte frame; see docs/events.md "Stream limits".
 */
export const streamChunkBytes = 16 * 1024;

/**
 * A batch ready to stream: only Index + Events, token secrets blanked. Event JSON, the full frame and its
 * bytes are computed on first use and then shared by every subscriber that needs them.
 */
export class PreparedBatch {
  readonly index: number;
  readonly events: readonly StreamEvent[];
  #eventJson: string[] | undefined;
  #frame: string | undefined;
  #framePieces: readonly Uint8Array[] | undefined;
  #bytes: number | undefined;
  #framesByFilter: Map<string, "all" | string | undefined> | undefined;
  #piecesByFilter: Map<string, readonly Uint8Array[]> | undefined;

  /** Whether many subscribers may see this object (live from the hub, or shared by readers of the log). */
  readonly shared: boolean;

  constructor(index: number, events: readonly StreamEvent[], verbatimFrame?: string, shared = false) {
    this.index = index;
    this.shared = shared;
    const safe = withoutSecrets(events);
    this.events = safe;
    this.#frame = safe === events ? verbatimFrame : undefined;
  }

  get eventJson(): readonly string[] {
    return this.#eventJson ??= this.events.map((e) => JSON.stringify(e));
  }

  /** Approximate size in bytes, for queue accounting. */
  get bytes(): number {
    if (this.#bytes === undefined) {
      let n = 32;
      for (const s of this.eventJson) n += s.length + 1;
      this.#bytes = n;
    }
    return this.#bytes;
  }

  get fullFrame(): string {
    return this.#frame ??= `{"Index":${this.index},"Events":[${this.eventJson.join(",")}]}`;
  }

  /** What frameFor gives for subscribers sharing one filter (same namespace and topics): computed once. */
  frameForFilter(filterKey: string, compute: () => "all" | string | undefined): "all" | string | undefined {
    this.#framesByFilter ??= new Map();
    if (this.#framesByFilter.has(filterKey)) return this.#framesByFilter.get(filterKey);
    const frame = compute();
    this.#framesByFilter.set(filterKey, frame);
    return frame;
  }

  /** A filtered frame line (newline included), encoded and cut once for every subscriber with that filter. */
  framePiecesForFilter(filterKey: string, line: string): readonly Uint8Array[] {
    this.#piecesByFilter ??= new Map();
    let pieces = this.#piecesByFilter.get(filterKey);
    if (pieces === undefined) {
      pieces = splitBytes(encoder.encode(line), true);
      this.#piecesByFilter.set(filterKey, pieces);
    }
    return pieces;
  }

  /**
   * The full frame line, newline included, encoded once for all subscribers and cut into pieces of at most
   * streamChunkBytes, each its own buffer: a reader stalled inside a big frame keeps only the pieces it was
   * handed alive, not the whole frame.
   */
  get fullFramePieces(): readonly Uint8Array[] {
    return this.#framePieces ??= splitBytes(encoder.encode(this.fullFrame + "\n"), true);
  }
}

/** `bytes` cut into pieces of at most streamChunkBytes: copies (`copy`, each piece its own buffer) or views. */
export function splitBytes(bytes: Uint8Array, copy: boolean): Uint8Array[] {
  if (bytes.length <= streamChunkBytes) return [bytes];
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += streamChunkBytes) {
    const end = Math.min(at + streamChunkBytes, bytes.length);
    pieces.push(copy ? bytes.slice(at, end) : bytes.subarray(at, end));
  }
  return pieces;
}

/** The stream never carries a token secret, whatever a producer wrote. */
function withoutSecrets(events: readonly StreamEvent[]): readonly StreamEvent[] {
  let out: StreamEvent[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.Topic !== "ACLToken") continue;
    const token = (e.Payload as { ACLToken?: { SecretID?: unknown } }).ACLToken;
    if (token && typeof token === "object" && token.SecretID !== "" && token.SecretID !== undefined) {
      out ??= [...events];
      out[i] = { ...e, Payload: { ...e.Payload, ACLToken: { ...token, SecretID: "" } } };
    }
  }
  return out ?? events;
}

/** Parses one raw log line into a prepared batch (Docs and recovery members are dropped here). */
export function prepareLine(index: number, line: string, shared = false): PreparedBatch {
  const record = JSON.parse(line) as Record<string, unknown> & { Events?: StreamEvent[] };
  const events = Array.isArray(record.Events) ? record.Events : [];
  // A line holding nothing but Index and Events is already the frame.
  const onlyStreamMembers = Object.keys(record).length === 2;
  return new PreparedBatch(index, events, onlyStreamMembers ? line : undefined, shared);
}

/**
 * What a subscriber sends for `batch`: "all" (the shared full frame), a frame of its own, or undefined when
 * nothing matches.
 */
export function frameFor(
  batch: PreparedBatch,
  matcher: EventMatcher,
  everything: boolean,
): "all" | string | undefined {
  const n = batch.events.length;
  if (n === 0) return undefined;
  if (everything) return "all";
  // Most subscribers keep every event of a batch: find that out without allocating.
  let first = 0;
  while (first < n && matcher(batch.events[first]!)) first++;
  if (first === n) return "all";
  const keep: number[] = [];
  for (let i = 0; i < first; i++) keep.push(i);
  for (let i = first + 1; i < n; i++) if (matcher(batch.events[i]!)) keep.push(i);
  if (keep.length === 0) return undefined;
  const json = batch.eventJson;
  return `{"Index":${batch.index},"Events":[${keep.map((i) => json[i]).join(",")}]}`;
}

export type BatchSink = (batch: PreparedBatch) => void;

export class StreamHub {
  readonly #log: CommitLog;
  #sinks = new Set<BatchSink>();
  #unsubscribe: (() => void) | undefined;
  /**
   * Batches still alive somewhere (a live batch in a queue, or one a lagging reader prepared from the log), by
   * Index: lagging readers at about the same place share one copy, and its frame pieces, instead of each
   * holding its own. Weak: this map keeps nothing alive.
   */
  #alive = new Map<number, WeakRef<PreparedBatch>>();
  #forget = new FinalizationRegistry<number>((index) => {
    if (this.#alive.get(index)?.deref() === undefined) this.#alive.delete(index);
  });

  constructor(log: CommitLog) {
    this.#log = log;
  }

  get subscriberCount(): number {
    return this.#sinks.size;
  }

  /** Adds a sink for every batch committed from now on; returns its removal. */
  add(sink: BatchSink): () => void {
    this.#sinks.add(sink);
    this.#unsubscribe ??= this.#log.subscribe((b) => this.#dispatch(b));
    return () => {
      this.#sinks.delete(sink);
    };
  }

  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#sinks.clear();
    this.#alive.clear();
  }

  /** The batch at `index` as read from the log by a lagging reader: the copy already in memory, if any. */
  fromLog(index: number, line: string): PreparedBatch {
    const known = this.#alive.get(index)?.deref();
    if (known) return known;
    const batch = prepareLine(index, line, true);
    this.#remember(batch);
    return batch;
  }

  #remember(batch: PreparedBatch): void {
    this.#alive.set(batch.index, new WeakRef(batch));
    this.#forget.register(batch, batch.index);
  }

  #dispatch(batch: CommittedBatch): void {
    if (this.#sinks.size === 0) return;
    const prepared = new PreparedBatch(batch.index, batch.record.Events, undefined, true);
    this.#remember(prepared);
    for (const sink of this.#sinks) sink(prepared);
  }
}
