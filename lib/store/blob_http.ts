// The one answer to a blob download for every blob store (file/blobs.ts, s3/blobs.ts): ETag, If-None-Match → 304,
// a single byte Range → 206 (or 416 with Content-Range), HEAD without a body. A store supplies only the blob's
// size and, when a body is sent, a stream of the bytes asked for (no copy through here).

/** What a store hands over for one answer. */
export interface BlobBytes {
  size: number;
  /** The bytes [start, start + length) as a stream; called at most once, only for a GET with a non-empty body. */
  stream(start: number, length: number): Promise<ReadableStream<Uint8Array>>;
  /** Called instead of stream() when the answer has no body (frees what the store opened, e.g. a file). */
  discard(): void;
}

/** A response for the blob named `sha256` (its ETag), with the caller's `headers` (Content-Type by default binary). */
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
  if (matchesEtag(request.headers.get("If-None-Match"), sha256)) return bodiless(304);
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
