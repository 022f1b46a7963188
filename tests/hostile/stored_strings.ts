// Hostile strings a user can store in a field (every control character, DEL, lone surrogates, non-BMP, bidi
// controls, 10 KB), and the checks every answer that may show one must pass: no 5xx, every header value made
// of bytes an HTTP/1.1 writer may send (Deno's panics on any other and the whole process exits), and the
// server process still alive.

import fc from "fast-check";
import { rawRequest, type RawResponse } from "../registry_fuzz/raw_http.ts";

/** 0x00–0x1f and DEL: the bytes Deno 2.9's HTTP/1.1 writer refuses in a header value (tab excepted). */
export const controlCharacters = [...Array(32).keys(), 0x7f].map((c) => String.fromCharCode(c));

/** One character (or short run) each of the kinds that broke servers before. */
export const hostilePieces = [
  ...controlCharacters,
  "\ud800", // lone high surrogate
  "\udfff", // lone low surrogate
  "\udc00\ud800", // reversed pair
  "\u{1f4a9}", // non-BMP
  "\u{10ffff}",
  "\u202e", // right-to-left override
  "\u2066", // left-to-right isolate
  "\u200f",
  "\u2028", // line separator
  "\ufeff",
  "\u0085", // C1 next line
  "\u00e9\u00ff",
  "%00",
  "%0d%0a",
  "\r\nX-Injected: 1",
];

/** A string of about `kb` KiB that also holds hostile pieces. */
function long(kb: number): fc.Arbitrary<string> {
  return fc.constantFrom(...hostilePieces).map((p) => `${p}${"x".repeat(kb * 1024)}${p}`);
}

/** Any hostile string: a piece alone or inside text, runs of pieces, binary strings, or 10 KB of text. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...hostilePieces).map((p) => `a${p}b`), weight: 4 },
  { arbitrary: fc.constantFrom(...hostilePieces), weight: 2 },
  {
    arbitrary: fc.array(fc.constantFrom(...hostilePieces), { minLength: 2, maxLength: 6 }).map((a) =>
      a.join("")
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 24 }), weight: 2 },
  { arbitrary: long(10), weight: 1 },
);

/** A URL whose path, query, fragment or user info holds `piece` (URL fields: a bare string is just refused). */
export function inUrl(piece: string, where: number): string {
  switch (where % 4) {
    case 0:
      return `https://files.example/a${piece}b.box`;
    case 1:
      return `https://files.example/box?q=${piece}`;
    case 2:
      return `https://files.example/box#${piece}`;
    default:
      return `https://u${piece}@files.example/box`;
  }
}

export const hostileUrl: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(hostileString, fc.nat(3)).map(([s, at]) => inUrl(s, at)),
  hostileString,
);

/** The header lines of a raw answer whose bytes an HTTP/1.1 writer must never send: CTLs but tab, DEL. */
export function badHeaderLines(response: RawResponse): string[] {
  const bad: string[] = [];
  let start = 0;
  const head = response.head;
  for (let i = 0; i <= head.length; i++) {
    const atEnd = i === head.length || (head[i] === 13 && head[i + 1] === 10);
    if (!atEnd) continue;
    const line = head.subarray(start, i);
    if (line.some((b) => (b < 0x20 && b !== 0x09) || b === 0x7f)) {
      bad.push(JSON.stringify(new TextDecoder().decode(line).slice(0, 200)));
    }
    start = i + 2;
    i++;
  }
  return bad;
}

/** A server we can tell is dead: its exit status settles when the process ends. */
export interface Liveness {
  url: string;
  /** Resolves with the exit code once the server process has ended. */
  exited: Promise<number>;
  /** The tail of what the server printed on stderr (a panic's message). */
  stderr(): string;
}

/** Throws a clear error when the server process has exited. */
export async function assertAlive(server: Liveness, after: string): Promise<void> {
  const code = await Promise.race([
    server.exited,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 0)),
  ]);
  if (code !== undefined) {
    throw new Error(
      `the server process exited (code ${code}) after ${after}\n--- server stderr ---\n${
        server.stderr().slice(-3000)
      }`,
    );
  }
}

/**
 * Sends one request and checks the answer: an answer at all (a refused or dropped connection with the process
 * gone is reported as its death), no 5xx, every header line free of control bytes.
 */
export async function probe(
  server: Liveness,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const where = `${method} ${path.slice(0, 160)}`;
  let response: RawResponse;
  try {
    response = await rawRequest(server.url, method, path, {
      headers: body === undefined || Object.keys(headers).some((k) => k.toLowerCase() === "content-type")
        ? headers
        : { "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : new TextEncoder().encode(body),
    });
  } catch (err) {
    // Give a dying process up to 3 s to be seen as dead, then say so plainly.
    await Promise.race([server.exited, new Promise((r) => setTimeout(r, 3000))]);
    await assertAlive(server, where);
    throw new Error(`no HTTP answer to ${where}: ${err}`);
  }
  await assertAlive(server, where);
  const what = `${where} → ${response.status} ${response.text.slice(0, 300)}`;
  if (response.status < 100 || response.status >= 500) throw new Error(`server error: ${what}`);
  const bad = badHeaderLines(response);
  if (bad.length) throw new Error(`header values with control bytes: ${bad.join(", ")} in ${what}`);
  return response;
}
