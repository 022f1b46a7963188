// A bare HTTP/1.1 client over TCP: sends the request target byte for byte (fetch would resolve `..` and
// `%2e%2e` before sending, hiding exactly the paths a hostile client can send), one connection per request.

import { concatBytes } from "../../lib/bytes.ts";

export interface RawResponse {
  status: number;
  /** The status line and header lines exactly as received (for byte-level checks of header values). */
  head: Uint8Array;
  headers: Headers;
  body: Uint8Array;
  text: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  options: { headers?: Record<string, string>; body?: Uint8Array; host?: string } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  try {
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${options.host ?? url.host}`, "Connection: close"];
    for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`${name}: ${value}`);
    if (options.body) lines.push(`Content-Length: ${options.body.length}`);
    const head = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
    try {
      await writeAll(conn, head);
      if (options.body) await writeAll(conn, options.body);
    } catch {
      // the server may answer (413, 404) and close before reading a large body; its answer still counts
    }
    const raw = await readAll(conn);
    return parseResponse(raw, method === "HEAD");
  } finally {
    try {
      conn.close();
    } catch {
      // already closed by the peer
    }
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
}

export async function readAll(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  while (true) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      break; // reset after the answer (e.g. the server refusing the rest of a large body)
    }
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  return concatBytes(chunks);
}

function indexOfHeaderEnd(raw: Uint8Array): number {
  for (let i = 0; i + 3 < raw.length; i++) {
    if (raw[i] === 13 && raw[i + 1] === 10 && raw[i + 2] === 13 && raw[i + 3] === 10) return i;
  }
  return -1;
}

export function parseResponse(raw: Uint8Array, isHead: boolean): RawResponse {
  const end = indexOfHeaderEnd(raw);
  if (end < 0) {
    throw new Error(`no HTTP response head in ${raw.length} bytes: ${decoder.decode(raw.slice(0, 200))}`);
  }
  const [statusLine = "", ...headerLines] = decoder.decode(raw.subarray(0, end)).split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? "0");
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = isHead ? new Uint8Array(0) : raw.subarray(end + 4);
  if (!isHead && headers.get("transfer-encoding")?.toLowerCase().includes("chunked")) body = unchunk(body);
  return { status, head: raw.slice(0, end), headers, body, text: decoder.decode(body) };
}

function unchunk(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let offset = 0;
  while (offset < data.length) {
    let lineEnd = offset;
    while (lineEnd + 1 < data.length && !(data[lineEnd] === 13 && data[lineEnd + 1] === 10)) lineEnd++;
    const size = parseInt(decoder.decode(data.subarray(offset, lineEnd)).split(";")[0]!, 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return concatBytes(parts);
}
