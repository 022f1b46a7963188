// The one answer to a blob download for every blob store (file/blobs.ts, s3/blobs.ts): ETag, If-None-Match → 304,
// else If-Modified-Since → 304 against the caller's Last-Modified, a single byte Range → 206 (or 416 with
// Content-Range), HEAD without a body. A store supplies only the blob's
// size and, when a body is sent, a stream of the bytes asked for (no copy through here).

/** What a store hands over for one answer. */
export interface BlobBytes {
  size: number;
  /** The bytes [start, start + length) as a stream; called at most once, only for a GET with a non-empty body. */
  stream(start: number, length: number): Promise<ReadableStream<Uint8Array>>;
  /** Called instead of stream() when the answer has no body (frees what the store opened, e.g. a file). */
  discard(): void;
}

/**
 * A response for the blob named `sha256` (its ETag), with the caller's `headers` (Content-Type by default binary;
 * a Last-Modified there is what If-Modified-Since is compared with).
 */
export async function blobResponse(
  sha256: string,
  request: Request,
  headers: HeadersInit,
  bytes: BlobBytes,
): Promise<Response> {
  const out = new Headers(headers);
  out.set("ETag", `"${sha256}"`);
  out.set("Accept-Ranges", "bytes");
  if (!out.has("Content-Type")) out.set("Content-Type", "application/octet-stream");
  const bodiless = (status: number) => {
    bytes.discard();
    return new Response(null, { status, headers: out });
  };
  const ifNoneMatch = request.headers.get("If-None-Match");
  if (matchesEtag(ifNoneMatch, sha256)) return bodiless(304);
  // If-None-Match, when sent, decides alone; If-Modified-Since applies to GET and HEAD only (docs/storage.md).
  const readOnly = request.method === "GET" || request.method === "HEAD";
  if (ifNoneMatch === null && readOnly && notModifiedSince(request.headers.get("If-Modified-Since"), out)) {
    return bodiless(304);
  }
  const { size } = bytes;
  const range = parseRange(request.headers.get("Range"), size, request.headers.get("If-Range"), sha256);
  if (range === "unsatisfiable") {
    out.set("Content-Range", `bytes */${size}`);
    return bodiless(416);
  }
  const [start, end] = range ?? [0, size - 1];
  const length = range ? end - start + 1 : size;
  if (range) out.set("Content-Range", `bytes ${start}-${end}/${size}`);
  out.set("Content-Length", String(length));
  const status = range ? 206 : 200;
  if (request.method === "HEAD" || length === 0) return bodiless(status);
  return new Response(await bytes.stream(start, length), { status, headers: out });
}

/** Whether an If-None-Match list names this blob's ETag (or is `*`). */
function matchesEtag(ifNoneMatch: string | null, sha256: string): boolean {
  return ifNoneMatch !== null &&
    ifNoneMatch.split(",").some((tag) => tag.trim() === `"${sha256}"` || tag.trim() === "*");
}

/** Whether the answer's Last-Modified is not later than an If-Modified-Since date (one that cannot be read: no). */
function notModifiedSince(ifModifiedSince: string | null, headers: Headers): boolean {
  const since = httpDate(ifModifiedSince);
  const modified = httpDate(headers.get("Last-Modified"));
  return since !== undefined && modified !== undefined && modified <= since;
}

const imfFixdate = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const rfc850Date = /^[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const asctimeDate = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/** Milliseconds of an HTTP date in any of its three forms; undefined for anything else. */
function httpDate(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  let ms = NaN;
  if (imfFixdate.test(text) || rfc850Date.test(text)) ms = Date.parse(text);
  // asctime carries no zone and means UTC.
  else if (asctimeDate.test(text)) ms = Date.parse(`${text} GMT`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Parses a single byte range; undefined = the whole body (no Range, an If-Range naming another ETag, a form not
 * understood, several ranges); "unsatisfiable" = nothing of the body lies in it (answered 416).
 */
export function parseRange(
  header: string | null,
  size: number,
  ifRange: string | null = null,
  etag = "",
): [number, number] | "unsatisfiable" | undefined {
  if (!header) return undefined;
  if (ifRange && ifRange !== `"${etag}"`) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, a, b] = m;
  if (a === "" && b === "") return undefined;
  let start: number;
  let end: number;
  if (a === "") {
    const suffix = Number(b);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === "" ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) return "unsatisfiable";
  return [start, end];
}
