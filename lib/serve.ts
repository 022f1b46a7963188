// HTTP serving with the limits Deno.serve lacks: wharf accepts TCP connections itself and hands each one to
// Deno's HTTP server for that connection, so it can refuse connections past a cap, ride out accept errors
// (EMFILE) and close connections that stall, while requests still take Deno's native HTTP path.
//
// Why (docs/security.md): Deno 2.9.6's Deno.serve has no header, body or idle timeout, and its accept loop ends
// at the first accept error: past the file limit `finished` rejects and the port is closed for good. Deno.serve
// has no option for any of this, so the listener is ours: `Deno.listen` + an accept loop, and for each connection
// Deno's own `serveHttpOnConnection` (what Deno.serve runs per listener, reachable through `Deno[Deno.internal]`),
// whose abort signal force-closes that one connection. A JS proxy in front of Deno.serve would see every byte but
// copies each one twice; node:http has the timeouts but runs its HTTP parsing in JS. When the internal is missing
// (another Deno), `serve` falls back to Deno.serve restarted after accept errors, without the timeouts, and says so.
//
// What is measured, per connection, by a sweep (one timer for all connections, period ≤ 1 s): the time from
// accept to the first request's headers (header timeout); from the end of the last response to the next request's
// headers (idle timeout: Deno's parser does not say when a next request's first byte arrived, so a kept-alive
// connection's next request is bounded by the idle timeout); and how long a handler has been waiting for request
// body bytes (body timeout). A connection with a request in flight (a stream, a download) is never closed for idling.

import { ApiError } from "./errors.ts";
import type { Logger } from "./log.ts";

export interface ServeLimits {
  /** Milliseconds from accept to a request's complete headers; 0 = none. */
  headerTimeoutMs: number;
  /** Milliseconds a request body may go without delivering a byte to a handler reading it; 0 = none. */
  bodyTimeoutMs: number;
  /** Milliseconds a kept-alive connection may wait between the end of a response and the next request; 0 = none. */
  idleTimeoutMs: number;
  /** Open connections past which new ones get a 503 and are closed. */
  maxConnections: number;
}

export interface ServeOptions extends ServeLimits {
  hostname: string;
  port: number;
  logger: Logger;
  onError: (error: unknown) => Response | Promise<Response>;
  /**
   * false: plain Deno.serve, served again after accept errors, without timeouts or cap (for a reverse proxy that
   * enforces its own; it saves the per-request cost of the connection bookkeeping).
   */
  connectionLimits?: boolean;
}

export type ServeHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** Counts of the connection layer, read at scrape time (lib/metrics: wharf_http_*connections*). */
export interface ConnectionStats {
  open: number;
  /** Requests whose response is not fully sent yet, on every connection. */
  inflight: number;
  /** Connections refused (503) past the connection cap, since start. */
  refused: number;
  /** Connections closed for a timeout, since start, by which one. */
  timedOut: Record<"header" | "idle" | "body", number>;
}

export interface Serving {
  addr: Deno.NetAddr;
  /** "connections": wharf accepts and times connections; "deno-serve": the fallback without timeouts. */
  mode: "connections" | "deno-serve";
  /** Open connections (connections mode). */
  connections(): number;
  /** The connection layer's counts (all zero in deno-serve mode, which keeps none). */
  stats(): ConnectionStats;
  /** Stops accepting, closes each connection gracefully once no request is in flight on it, waits for them. */
  shutdown(): Promise<void>;
  /**
   * Force-closes every connection left (after the shutdown grace period) but one whose graceful close began
   * (a request that arrived as it began): Deno gives no way to cut that one.
   */
  closeAll(): void;
  /** Settles once shutdown is done; never rejects (errors are logged and served through). */
  finished: Promise<void>;
}

/** A per-connection HTTP server as Deno's serveHttpOnConnection returns it. */
interface ConnectionServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: ServeHandler,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => ConnectionServer;

/** Deno's internal serveHttpOnConnection, when this Deno has it. */
export function serveOnConnection(): ServeOnConnection | undefined {
  const deno = Deno as unknown as Record<PropertyKey, unknown> & { internal?: symbol };
  if (typeof deno.internal !== "symbol") return undefined;
  const internal = deno[deno.internal] as Record<string, unknown> | undefined;
  const fn = internal?.serveHttpOnConnection;
  return typeof fn === "function" ? fn as ServeOnConnection : undefined;
}

/**
 * The default connection cap: three quarters of the soft file limit (at least 64 descriptors left for the data
 * dir, logs and uploads), or 1000 when the limit cannot be read.
 */
export function defaultMaxConnections(): number {
  let limit: number | undefined;
  try {
    const m = /^Max open files\s+(\d+)/m.exec(Deno.readTextFileSync("/proc/self/limits"));
    if (m) limit = Number(m[1]);
  } catch {
    // not Linux, or no read permission
  }
  if (limit === undefined || !Number.isSafeInteger(limit)) return 1000;
  return Math.max(16, Math.min(Math.floor(limit * 0.75), limit - 64));
}

/** Serves `handler` on hostname:port with the given limits. Throws what Deno.listen throws (AddrInUse, ...). */
export function serve(options: ServeOptions, handler: ServeHandler): Serving {
  if (options.connectionLimits === false) return serveWithDenoServe(options, handler);
  const serveOn = serveOnConnection();
  if (serveOn) return new ConnectionsServer(options, handler, serveOn).serving();
  options.logger.warn(
    "this Deno has no serveHttpOnConnection: serving with Deno.serve, without header/body/idle timeouts or a connection cap",
  );
  return serveWithDenoServe(options, handler);
}

const busyBody = "Too many connections, retry later\n";
const busyResponse = new TextEncoder().encode(
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 1\r\nConnection: close\r\n" +
    `Content-Length: ${busyBody.length}\r\n\r\n${busyBody}`,
);

/** A handler waiting for request body bytes. */
interface BodyWait {
  since: number;
  fail(error: Error): void;
}

class Connection {
  readonly abort = new AbortController();
  server: ConnectionServer | undefined;
  inflight = 0;
  /** Whether a request has completed on this connection (its next wait is an idle one). */
  served = false;
  /** Monotonic ms past which the connection is closed while no request is in flight. */
  deadline: number;
  readonly waits = new Set<BodyWait>();
  /** Called when a request's response is done (or failed): bound once per connection. */
  readonly done: () => void;
  readonly remote: string;
  /** Settles when Deno has finished serving the connection; never rejects. */
  ended: Promise<void> = Promise.resolve();
  /**
   * The graceful close was started: Deno took the connection's handle, its abort signal no longer reaches it
   * (aborting it would throw in Deno's listener), and the connection ends once its requests in flight do.
   */
  closing = false;
  /** Called once when no request is in flight any more (shutdown waits for this before the graceful close). */
  onIdle: (() => void) | undefined;

  constructor(deadline: number, remote: string, onDone: (c: Connection) => void) {
    this.deadline = deadline;
    this.remote = remote;
    this.done = () => onDone(this);
  }
}

/** Rate-limits a warning: at most one line per 10 s, with the count of occurrences folded into it. */
class Throttled {
  #last = -Infinity;
  #count = 0;
  constructor(private readonly logger: Logger, private readonly msg: string) {}
  note(fields: Record<string, unknown> = {}): void {
    this.#count++;
    const now = performance.now();
    if (now - this.#last < 10_000) return;
    this.#last = now;
    this.logger.warn(this.msg, { ...fields, occurrences: this.#count });
    this.#count = 0;
  }
}

class ConnectionsServer {
  readonly #options: ServeOptions;
  readonly #handler: ServeHandler;
  readonly #serveOn: ServeOnConnection;
  #listener: Deno.Listener<Deno.TcpConn, Deno.NetAddr>;
  readonly #conns = new Set<Connection>();
  readonly #periodMs: number;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  /** performance.now() at the last sweep: deadlines are set from it, plus one period so none fires early. */
  #now = performance.now();
  #stopping = false;
  #acceptLoop: Promise<void>;
  readonly #acceptFailed: Throttled;
  readonly #refused: Throttled;
  #refusedCount = 0;
  readonly #timedOut = { header: 0, idle: 0, body: 0 };

  constructor(options: ServeOptions, handler: ServeHandler, serveOn: ServeOnConnection) {
    this.#options = options;
    this.#handler = handler;
    this.#serveOn = serveOn;
    this.#listener = Deno.listen({ hostname: options.hostname, port: options.port, transport: "tcp" });
    const timeouts = [options.headerTimeoutMs, options.bodyTimeoutMs, options.idleTimeoutMs].filter((t) =>
      t > 0
    );
    this.#periodMs = Math.min(1000, Math.max(20, Math.floor(Math.min(...timeouts, 8000) / 8)));
    this.#acceptFailed = new Throttled(options.logger, "accepting a connection failed; retrying");
    this.#refused = new Throttled(options.logger, "connection limit reached; refusing new connections");
    if (timeouts.length > 0) {
      const timer = setInterval(() => this.#sweep(), this.#periodMs);
      Deno.unrefTimer(timer);
      this.#sweepTimer = timer;
    }
    this.#acceptLoop = this.#accept();
  }

  serving(): Serving {
    let resolveFinished!: () => void;
    const finished = new Promise<void>((r) => (resolveFinished = r));
    let shuttingDown: Promise<void> | undefined;
    return {
      addr: this.#listener.addr,
      mode: "connections",
      connections: () => this.#conns.size,
      stats: () => {
        let inflight = 0;
        for (const c of this.#conns) inflight += c.inflight;
        return {
          open: this.#conns.size,
          inflight,
          refused: this.#refusedCount,
          timedOut: { ...this.#timedOut },
        };
      },
      shutdown: () => {
        shuttingDown ??= this.#shutdown().then(resolveFinished);
        return shuttingDown;
      },
      closeAll: () => this.#closeAll(),
      finished,
    };
  }

  async #accept(): Promise<void> {
    let backoff = 0;
    while (!this.#stopping) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
        backoff = 0;
      } catch (err) {
        if (this.#stopping) return;
        // EMFILE/ENFILE, ECONNABORTED, ...: the listener stays usable; wait (up to 1 s) and accept again. Pending
        // connections wait in the kernel's backlog meanwhile.
        backoff = Math.min(1000, backoff ? backoff * 2 : 10);
        this.#acceptFailed.note({
          error: err instanceof Error ? err.message : String(err),
          retry_ms: backoff,
        });
        if (err instanceof Deno.errors.BadResource) this.#relisten();
        await new Promise((r) => setTimeout(r, backoff));
        continue;
      }
      if (this.#conns.size >= this.#options.maxConnections) {
        this.#refuse(conn);
        continue;
      }
      this.#open(conn);
    }
  }

  /** The listener was closed under us (not by shutdown): listen again on the same address. */
  #relisten(): void {
    try {
      this.#listener = Deno.listen({ hostname: this.#options.hostname, port: this.#listener.addr.port });
    } catch (err) {
      this.#options.logger.error("listening again failed", { error: String(err) });
    }
  }

  #refuse(conn: Deno.TcpConn): void {
    this.#refusedCount++;
    this.#refused.note({ max_connections: this.#options.maxConnections });
    conn.write(busyResponse).catch(() => {}).finally(() => {
      try {
        conn.close();
      } catch {
        // already closed
      }
    });
  }

  #open(conn: Deno.TcpConn): void {
    const { headerTimeoutMs, bodyTimeoutMs } = this.#options;
    const remote = conn.remoteAddr.hostname;
    const c = new Connection(
      headerTimeoutMs > 0 ? performance.now() + headerTimeoutMs + this.#periodMs : Infinity,
      remote,
      (c) => this.#requestDone(c),
    );
    const handler = this.#handler;
    const guardBodies = bodyTimeoutMs > 0;
    const perConnection = (request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
      c.inflight++;
      c.deadline = Infinity;
      info.completed.then(c.done, c.done);
      if (guardBodies) {
        const method = request.method;
        if (method !== "GET" && method !== "HEAD") guardBody(request, c, this);
      }
      return handler(request, info);
    };
    this.#conns.add(c);
    try {
      c.server = this.#serveOn(conn, c.abort.signal, perConnection, this.#options.onError, () => {});
    } catch (err) {
      this.#conns.delete(c);
      this.#options.logger.error("serving a connection failed", { error: String(err) });
      try {
        conn.close();
      } catch {
        // taken or closed
      }
      return;
    }
    const forget = () => {
      this.#conns.delete(c);
    };
    c.ended = c.server.finished.then(forget, (err) => {
      forget();
      this.#options.logger.debug("connection ended with an error", { error: String(err) });
    });
  }

  #requestDone(c: Connection): void {
    c.served = true;
    if (--c.inflight > 0) return;
    const onIdle = c.onIdle;
    c.onIdle = undefined;
    onIdle?.();
    const idle = this.#options.idleTimeoutMs;
    c.deadline = idle > 0 ? this.#now + idle + this.#periodMs : Infinity;
  }

  /** Monotonic ms to start a body wait from (the sweep's clock; the sweep allows one period more). */
  get now(): number {
    return this.#now;
  }

  #sweep(): void {
    const now = this.#now = performance.now();
    const bodyLimit = this.#options.bodyTimeoutMs + this.#periodMs;
    for (const c of this.#conns) {
      if (c.inflight === 0) {
        if (now > c.deadline) this.#close(c, c.served ? "idle" : "header");
      } else if (c.waits.size > 0 && this.#options.bodyTimeoutMs > 0) {
        for (const w of c.waits) {
          if (now - w.since <= bodyLimit) continue;
          this.#close(c, "body");
          break;
        }
      }
    }
  }

  #close(c: Connection, reason: "header" | "idle" | "body"): void {
    this.#conns.delete(c);
    this.#timedOut[reason]++;
    const why = reason === "header"
      ? "request headers not received in time"
      : reason === "idle"
      ? "idle keep-alive connection"
      : "request body stalled";
    this.#options.logger.debug(`closing connection: ${why}`, { remote: c.remote });
    if (reason === "body") {
      const error = new ApiError(408, "The request body stalled; the connection is closed");
      for (const w of c.waits) w.fail(error);
    }
    this.#abort(c);
  }

  /** Force-closes a connection, unless its graceful close has already taken it from reach. */
  #abort(c: Connection): boolean {
    if (c.closing) return false;
    abortQuietly(c.abort);
    return true;
  }

  #closeAll(): void {
    let finishing = 0;
    for (const c of this.#conns) {
      if (!this.#abort(c)) finishing++;
    }
    if (finishing > 0) {
      this.#options.logger.warn("connections still finishing a request after the shutdown grace period", {
        connections: finishing,
      });
    }
  }

  async #shutdown(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#sweepTimer);
    try {
      this.#listener.close();
    } catch {
      // already closed
    }
    await this.#acceptLoop;
    await Promise.all([...this.#conns].map((c) => this.#closeWhenIdle(c)));
  }

  /**
   * Closes a connection gracefully once no request is in flight on it. Until then it stays reachable by its abort
   * signal, so closeAll can still cut it when the grace period ends (Deno's graceful close takes the connection's
   * handle: from then on nothing can force it).
   */
  async #closeWhenIdle(c: Connection): Promise<void> {
    while (this.#conns.has(c) && c.inflight > 0) {
      await Promise.race([new Promise<void>((r) => (c.onIdle = r)), c.ended]);
    }
    if (!this.#conns.has(c) || !c.server) return;
    c.closing = true;
    await c.server.shutdown().catch(() => {});
    await c.ended;
  }
}

/**
 * Aborts a connection's signal. Deno's listener on it cancels the connection's HTTP handle and throws BadResource
 * when Deno has closed that handle already (the client closed the connection and Deno is finishing it, a window
 * wharf cannot observe); thrown in an event listener, that error is reported as uncaught and ends the process.
 * It is absorbed here, for the length of this synchronous call only.
 */
function abortQuietly(controller: AbortController): void {
  const absorb = (event: ErrorEvent) => {
    if (event.error instanceof Deno.errors.BadResource) event.preventDefault();
  };
  globalThis.addEventListener("error", absorb);
  try {
    controller.abort();
  } finally {
    globalThis.removeEventListener("error", absorb);
  }
}

const wholeBodyReaders = ["arrayBuffer", "bytes", "text", "json", "blob", "formData"] as const;
const bodyGetter = Object.getOwnPropertyDescriptor(Request.prototype, "body")!.get!;
const guardState = Symbol("wharf.bodyGuard");

interface GuardState {
  conn: Connection;
  server: { readonly now: number };
  stream?: ReadableStream<Uint8Array> | null;
}

/**
 * A Request whose body reads are timed: `body` is a stream that records each wait for bytes; the whole-body
 * readers (`arrayBuffer()`, `text()`, ...) of a body declared at most 64 KiB keep Deno's one-piece read and are
 * timed as one wait (such a body is either there or stalled), larger ones read the timed stream. A prototype
 * swap, not a new Request: building one with a stream body made a small POST 3× slower.
 */
const guardedRequestPrototype: object = Object.create(Request.prototype, {
  body: {
    get(this: Request & { [guardState]: GuardState }) {
      const state = this[guardState];
      if (state.stream === undefined) {
        const original = bodyGetter.call(this) as ReadableStream<Uint8Array> | null;
        state.stream = original && timedStream(original, state);
      }
      return state.stream;
    },
  },
  ...Object.fromEntries(wholeBodyReaders.map((name) => [name, {
    value(this: Request & { [guardState]: GuardState }) {
      const state = this[guardState];
      const original = Request.prototype[name] as (this: Request) => Promise<unknown>;
      const declared = this.headers.get("content-length");
      if (state.stream === undefined && declared !== null && Number(declared) <= 64 * 1024) {
        return timedWait(state, original.call(this));
      }
      const body = (this as Request).body;
      const headers = name === "formData" || name === "blob" ? this.headers : undefined;
      return (new Response(body, { headers }) as unknown as Record<string, () => Promise<unknown>>)[name]!();
    },
    writable: true,
    configurable: true,
  }])),
});

function guardBody(request: Request, conn: Connection, server: { readonly now: number }): void {
  (request as unknown as Record<symbol, GuardState>)[guardState] = { conn, server };
  Object.setPrototypeOf(request, guardedRequestPrototype);
}

/** Registers a wait for body bytes until `promise` settles; the sweep rejects it when the body stalls. */
function timedWait<T>(state: GuardState, promise: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const wait: BodyWait = { since: state.server.now, fail: reject };
    state.conn.waits.add(wait);
    promise.then(resolve, reject).finally(() => state.conn.waits.delete(wait));
  });
}

/** `body` with each read timed; a byte stream (BYOB reads pass through) when the original is one. */
function timedStream(body: ReadableStream<Uint8Array>, state: GuardState): ReadableStream<Uint8Array> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // not a byte stream
  }
  if (byob) {
    const reader = byob;
    return new ReadableStream({
      type: "bytes",
      autoAllocateChunkSize: 64 * 1024,
      async pull(controller) {
        const request = controller.byobRequest!;
        const view = request.view!;
        const { value, done } = await timedWait(
          state,
          reader.read(new Uint8Array(view.buffer as ArrayBuffer, view.byteOffset, view.byteLength)),
        );
        if (done) {
          controller.close();
          if (value) request.respondWithNewView(value);
          return;
        }
        request.respondWithNewView(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await timedWait(state, reader.read());
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * The fallback: Deno.serve, served again (same port) whenever its accept loop ends with an error, so the process
 * outlives connection pressure; no timeouts and no cap.
 */
function serveWithDenoServe(options: ServeOptions, handler: ServeHandler): Serving {
  let stopping = false;
  let port = options.port;
  // Every server started: one that stopped accepting may still be answering its open connections.
  const servers = new Set<Deno.HttpServer<Deno.NetAddr>>();
  const start = () => {
    const server = Deno.serve(
      { hostname: options.hostname, port, onListen() {}, onError: options.onError },
      handler,
    );
    port = server.addr.port;
    servers.add(server);
    return server;
  };
  let server = start();
  const addr = server.addr;
  const failed = new Throttled(options.logger, "the HTTP server stopped on an error; serving again");
  const finished = (async () => {
    let backoff = 0;
    for (;;) {
      const started = performance.now();
      try {
        await server.finished;
        if (stopping) return;
      } catch (err) {
        if (stopping) return;
        failed.note({ error: err instanceof Error ? err.message : String(err) });
      }
      if (performance.now() - started > 10_000) backoff = 0;
      for (;;) {
        backoff = Math.min(1000, backoff ? backoff * 2 : 10);
        await new Promise((r) => setTimeout(r, backoff));
        if (stopping) return;
        try {
          server = start();
          break;
        } catch (err) {
          failed.note({ error: err instanceof Error ? err.message : String(err) });
        }
      }
    }
  })();
  return {
    addr,
    mode: "deno-serve",
    connections: () => 0,
    stats: () => ({ open: 0, inflight: 0, refused: 0, timedOut: { header: 0, idle: 0, body: 0 } }),
    shutdown: async () => {
      stopping = true;
      await Promise.all([...servers].map((s) => s.shutdown().catch(() => {})));
      await finished;
    },
    closeAll: () => {},
    finished,
  };
}
