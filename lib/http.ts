// HTTP helpers shared by every family: request context, JSON bodies with size limits, JSON responses.

import { ApiError } from "./errors.ts";

export type Family = "registry" | "auth" | "events" | "server";

export interface RequestContext {
  request: Request;
  url: URL;
  /** Path parameters, percent-decoded. */
  params: Record<string, string>;
  requestId: string;
  /** The client address (first X-Forwarded-For hop only when WHARF_TRUST_PROXY is on). */
  clientIp: string;
  /** The route's body limit in bytes. */
  maxBodyBytes: number;
  /**
   * True when the router answers this request a second time (a GET that missed on a cluster node whose view
   * then caught up: lib/router/steps/cluster.ts): what the first answer counted, such as a rate limit, is not counted again.
   */
  readonly retry?: boolean;
  /**
   * What the steps of the route's module resolved for the steps after them and its handler (the registry's
   * caller: routes/registry/api/steps.ts); each module reads only what its own steps set.
   */
  locals?: unknown;
}

export type Handler = (ctx: RequestContext) => Response | Promise<Response>;

/**
 * Reads the body up to `limit` bytes; 413 past it, 400 when it ends early or its connection fails while it is
 * read (the client's doing, like an interrupted upload: routes/registry/services/upload_transfers.ts).
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("Content-Length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  try {
    return await readBodyBytes(request, declared, limit);
  } catch (err) {
    // Our own refusals (413, the 408 of a stalled body) as they are, and our own faults (a second read's
    // TypeError, a failed allocation's RangeError) stay 500s. Whatever else the read throws comes from the
    // client's bytes or connection: Deno's BadResource for a body cut short (body_cut_short_test.ts), its
    // connection errors, or a plain Error for chunked framing it cannot parse ("invalid HTTP/1 request").
    if (err instanceof ApiError || err instanceof TypeError || err instanceof RangeError) throw err;
    throw new BodyCutShort();
  }
}

/** The 400 for a body that ended early or whose connection failed while it was read. */
export class BodyCutShort extends ApiError {
  constructor() {
    super(400, "The request body ended early or its connection failed");
  }
}

async function readBodyBytes(request: Request, declared: string | null, limit: number): Promise<Uint8Array> {
  if (declared !== null && /^\d+$/.test(declared)) {
    // With a declared length within the limit, the HTTP layer delivers at most that many bytes: one read of
    // the whole body is cheaper than iterating its stream, and `request.body` is not touched first (its
    // getter builds a ReadableStream that arrayBuffer() then skips: ~3 % of an LDAP login's server CPU).
    // The size check after the read covers a Request built in process with a header that understates it.
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.length > limit) throw tooLarge(limit);
    return bytes;
  }
  if (!request.body) return new Uint8Array(0);
  return await readChunkedBody(request.body, limit, () => tooLarge(limit));
}

/**
 * Reads a body of unknown length into one buffer that grows up to `limit` (`tooLargeError()` past it, the rest
 * never read). Deno's default reader
 * allocates a ~64 KiB buffer for each chunk it delivers, so a body of 1-byte chunks held ~50,000x its size
 * until collected (GiBs for a few requests); a BYOB reader fills our buffer in place instead.
 */
export async function readChunkedBody(
  body: ReadableStream<Uint8Array>,
  limit: number,
  tooLargeError: () => Error,
): Promise<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    return await readStreamCopying(body, limit, tooLargeError); // not a byte stream (a Request built in process)
  }
  // Every read offers at least minByobRead bytes of room: the buffer may hold up to that much past the limit,
  // and a body that fills any of it is too large (no separate one-byte read to find out).
  let buffer = new Uint8Array(Math.min(limit, 16 * 1024) + minByobRead);
  let size = 0;
  while (true) {
    if (buffer.length - size < minByobRead) {
      const grown = new Uint8Array(
        Math.min(limit + minByobRead, Math.max(buffer.length * 2, size + minByobRead)),
      );
      grown.set(buffer.subarray(0, size));
      buffer = grown;
    }
    const { value, done } = await reader.read(new Uint8Array(buffer.buffer, size, buffer.length - size));
    if (value) buffer = new Uint8Array(value.buffer); // the read transferred our buffer and hands it back
    if (done) break;
    size += value!.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLargeError();
    }
  }
  return buffer.subarray(0, size);
}

/**
 * The least room a BYOB read of a request body is given. Deno 2.9.6's stream of a chunked request body never
 * settles a BYOB read into a view of 4 bytes or fewer (measured: a 1- or 2-byte view waits forever at once, a
 * 3-byte one after two reads, a 4-byte one at the body's end; a Content-Length body is not affected), so filling
 * a buffer to its last bytes, or reading one byte more to see whether a body passes its limit, stalled a body of
 * tiny chunks until the body timeout.
 */
const minByobRead = 1024;

/** The same for a stream without BYOB support: each chunk is copied out at once, so no chunk view is kept. */
async function readStreamCopying(
  body: ReadableStream<Uint8Array>,
  limit: number,
  tooLargeError: () => Error,
): Promise<Uint8Array> {
  let buffer = new Uint8Array(0);
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > limit) throw tooLargeError();
    if (size + chunk.length > buffer.length) {
      const grown = new Uint8Array(Math.min(limit, Math.max(buffer.length * 2, size + chunk.length)));
      grown.set(buffer.subarray(0, size));
      buffer = grown;
    }
    buffer.set(chunk, size);
    size += chunk.length;
  }
  return buffer.subarray(0, size);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function tooLarge(limit: number): ApiError {
  return new ApiError(413, `Request body too large: the limit is ${limit} bytes`);
}

/**
 * Parses a JSON body. An empty body gives `undefined` (callers decide whether that is allowed);
 * malformed JSON is a 400 whose message names the problem.
 */
export async function readJson(ctx: RequestContext, limit = ctx.maxBodyBytes): Promise<unknown> {
  const bytes = await readBody(ctx.request, limit);
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new ApiError(400, "Request body is not valid UTF-8");
  }
  if (text.charCodeAt(0) === 0xfeff) {
    // Go's encoding/json and Boundary's protojson refuse a byte order mark (the wording is Go's).
    const message = "Request body is not valid JSON: invalid character 'ï' looking for beginning of value";
    throw new ApiError(400, message, { details: { malformedJson: true } });
  }
  if (text.trim() === "") return undefined;
  if (jsonDepth(text) > maxJsonDepth) {
    // Deeper documents parse, but recursive code downstream (cloning, validation) would overflow its stack.
    throw new ApiError(
      400,
      `Request body is not valid JSON: exceeded max depth of ${maxJsonDepth} nested levels`,
      {
        details: { malformedJson: true },
      },
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, `Request body is not valid JSON: ${(err as Error).message}`, {
      details: { malformedJson: true },
    });
  }
}

/** Deepest nesting of arrays and objects a JSON body may have. */
export const maxJsonDepth = 1000;

/** The maximum nesting depth of `text` read as JSON (strings skipped), without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) max = depth;
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

const jsonHeaders = { "Content-Type": "application/json" };
const okJsonInit: ResponseInit = Object.freeze({ status: 200, headers: jsonHeaders });

/**
 * A JSON response from text serialized beforehand (fixed bodies such as health answers): no stringify and
 * no init object per request. A string body, not bytes: Deno copies a BufferSource body on construction.
 */
export function jsonText(text: string, status = 200): Response {
  return new Response(text, status === 200 ? okJsonInit : { status, headers: jsonHeaders });
}

export function json(body: unknown, status = 200, headers?: HeadersInit): Response {
  if (headers === undefined) return new Response(JSON.stringify(body), { status, headers: jsonHeaders });
  const h = new Headers(headers);
  if (!h.has("Content-Type")) h.set("Content-Type", "application/json");
  return new Response(JSON.stringify(body), { status, headers: h });
}

export function text(body: string, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  if (!h.has("Content-Type")) h.set("Content-Type", "text/plain; charset=utf-8");
  return new Response(body, { status, headers: h });
}

/** The first value of a bearer Authorization header, or undefined. */
export function bearerToken(request: Request): string | undefined {
  // Lowercase: Deno's Headers.get looks up a few lowercase names (this one among them) on a shorter path.
  const auth = request.headers.get("authorization");
  const m = auth ? /^\s*bearer\s+(\S+)/i.exec(auth) : null;
  return m?.[1];
}

/**
 * The request's URL. Deno builds it from the Host header, which a client may fill with what no URL holds
 * (`x:99999`, `[`, `a b`): that is the client's error, a 400, not a failure of the server.
 */
export function parseRequestUrl(href: string): URL {
  try {
    return new URL(href);
  } catch {
    throw new ApiError(400, "Malformed Host header");
  }
}

/** A host[:port] as a URL may hold: a name or an IPv4 or bracketed IPv6 address, a port up to 65535. */
export function validHost(host: string): boolean {
  const m = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::(\d{1,5}))?$/.exec(host);
  if (!m || (m[1] !== undefined && Number(m[1]) > 65535)) return false;
  try {
    new URL(`http://${host}`);
    return true;
  } catch {
    return false;
  }
}

let lastOrigin = { host: "", https: false, origin: "http://" };

/** scheme://host[:port] of this server as the client reached it (or WHARF_PUBLIC_URL). */
export function baseUrl(ctx: RequestContext, publicUrl: string, trustProxy: boolean): string {
  if (publicUrl) return publicUrl;
  if (!trustProxy) {
    // The common case without parsing the request URL: its scheme prefix and the Host header. The last answer
    // is kept: while requests name the same host (the usual case) they share one string (hot reads key on it).
    const host = ctx.request.headers.get("host");
    const href = ctx.request.url;
    const https = href.startsWith("https://");
    if (host !== null && (https || href.startsWith("http://"))) {
      if (host !== lastOrigin.host || https !== lastOrigin.https) {
        if (!validHost(host)) throw new ApiError(400, "Malformed Host header");
        lastOrigin = { host, https, origin: `${https ? "https" : "http"}://${host}` };
      }
      return lastOrigin.origin;
    }
  }
  const proto = trustProxy ? ctx.request.headers.get("X-Forwarded-Proto")?.split(",")[0]?.trim() : undefined;
  const host =
    (trustProxy ? ctx.request.headers.get("X-Forwarded-Host")?.split(",")[0]?.trim() : undefined) ??
      ctx.request.headers.get("Host") ?? ctx.url.host;
  if (!validHost(host)) throw new ApiError(400, "Malformed Host header");
  const scheme = proto === "https" || proto === "http" ? proto : ctx.url.protocol.replace(":", "");
  return `${scheme}://${host}`;
}
