// Reads only the status line, headers and (for a sized answer) the body of one request over raw TCP, then
// closes: the event stream's 200 never ends, and fetch refuses targets with a bare `%`, which we must send.

import type { RawResponse } from "../registry_fuzz/raw_http.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function headEnd(bytes: Uint8Array, length: number): number {
  for (let i = 0; i + 3 < length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/** The answer's head and, when it has a Content-Length, its body; a chunked (streaming) body is left unread. */
export async function probe(
  baseUrl: string,
  target: string,
  headers: Record<string, string>,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    const lines = [`GET ${target} HTTP/1.1`, `Host: ${url.host}`, "Connection: close"];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    const request = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
    for (let off = 0; off < request.length;) off += await conn.write(request.subarray(off));
    let buffer = new Uint8Array(64 * 1024);
    let size = 0;
    let end = -1;
    let wanted = -1;
    while (true) {
      if (size === buffer.length) {
        const bigger = new Uint8Array(buffer.length * 2);
        bigger.set(buffer);
        buffer = bigger;
      }
      const n = await conn.read(buffer.subarray(size));
      if (n === null) break;
      size += n;
      if (end < 0) end = headEnd(buffer, size);
      if (end < 0) continue;
      if (wanted < 0) {
        const head = decoder.decode(buffer.subarray(0, end));
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!length) break; // chunked: the stream stays open, the head is what we wanted
        wanted = end + 4 + Number(length[1]);
      }
      if (size >= wanted) break;
    }
    if (end < 0) throw new Error(`no response head for GET ${target.slice(0, 200)}`);
    const [statusLine = "", ...headerLines] = decoder.decode(buffer.subarray(0, end)).split("\r\n");
    const parsed = new Headers();
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      if (colon > 0) parsed.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    const body = buffer.slice(end + 4, wanted > 0 ? wanted : end + 4);
    return {
      status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? "0"),
      head: buffer.slice(0, end),
      headers: parsed,
      body,
      text: decoder.decode(body),
    };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // closed by the timer or the peer
    }
  }
}
