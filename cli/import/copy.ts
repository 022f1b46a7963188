// One file from the source to the target's upload, streamed (never on local disk): counted, hashed on the way,
// and refused before its end when the bytes are short or do not match the source's checksum.

import { createHash, type Hash } from "node:crypto";
import { ApiFailure, type Credentials, hostOf, openFile, type RegistryApi } from "./http.ts";

export interface FileCopy {
  /** `ns/box version provider/arch`, for progress and the report. */
  label: string;
  /** Where the source serves the file (its download URL, or an external URL with --copy-external). */
  from: string;
  checksum: string | null;
  checksum_type: string | null;
  /** The target provider's API path (`/api/v2/box/…/provider/:p/:arch`). */
  providerPath: string;
}

export interface CopyProgress {
  started(total: number | undefined): void;
  advanced(bytes: number): void;
}

export interface CopyContext {
  target: RegistryApi;
  sourceOrigin: string;
  sourceCredentials: Credentials;
}

/**
 * The file's size as the source announces it (following redirects), undefined when it cannot be told: a HEAD,
 * else a GET of its first byte (storage URLs signed for GET refuse a HEAD), whose Content-Range has the size.
 */
export async function remoteSize(ctx: CopyContext, url: string): Promise<number | undefined> {
  try {
    const head = await openFile(url, "HEAD", ctx.sourceOrigin, ctx.sourceCredentials);
    const length = head.headers.get("content-length");
    if (length !== null && head.headers.get("content-encoding") === null) return Number(length);
  } catch { /* try a ranged GET */ }
  try {
    const first = await openFile(url, "GET", ctx.sourceOrigin, ctx.sourceCredentials, { Range: "bytes=0-0" });
    await first.body?.cancel();
    const range = /\/(\d+)$/.exec(first.headers.get("content-range") ?? "");
    if (first.status === 206 && range) return Number(range[1]);
  } catch { /* unknown */ }
  return undefined;
}

/** Streams the file into a fresh upload of the target provider; resolves with the bytes copied. */
export async function copyFile(ctx: CopyContext, job: FileCopy, progress: CopyProgress): Promise<number> {
  const prepared = await ctx.target.call<{ upload_path?: string }>("GET", `${job.providerPath}/upload`);
  const uploadPath = prepared?.upload_path;
  if (!uploadPath) throw new ApiFailure(0, "the target gave no upload URL");
  const download = await openFile(job.from, "GET", ctx.sourceOrigin, ctx.sourceCredentials);
  const lengthHeader = download.headers.get("content-length");
  const expected = lengthHeader === null ? undefined : Number(lengthHeader);
  progress.started(expected);
  const sha256 = createHash("sha256");
  const declared: Hash | undefined = job.checksum_type && job.checksum_type !== "sha256"
    ? createHash(job.checksum_type)
    : undefined;
  let count = 0;
  let refused: string | undefined;
  const verify = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      count += chunk.byteLength;
      sha256.update(chunk);
      declared?.update(chunk);
      progress.advanced(chunk.byteLength);
      controller.enqueue(chunk);
    },
    // Failing here, before the stream ends, means the target never sees a complete upload and keeps nothing.
    flush() {
      if (expected !== undefined && count !== expected) {
        refused = `the source sent ${count} of ${expected} bytes`;
      } else if (job.checksum && job.checksum_type) {
        const actual = job.checksum_type === "sha256" ? sha256.copy().digest("hex") : declared!.digest("hex");
        if (actual !== job.checksum) {
          refused = `Checksum mismatch: expected ${job.checksum_type} ${job.checksum}, got ${actual}`;
        }
      }
      if (refused) throw new Error(refused);
    },
  });
  let answer: Response;
  try {
    answer = await fetch(uploadPath, { method: "PUT", body: download.body!.pipeThrough(verify) });
  } catch (err) {
    throw new ApiFailure(
      0,
      refused ?? `upload to the target failed: ${err instanceof Error ? err.message : err}`,
    );
  }
  const text = await answer.text();
  if (!answer.ok) {
    let why = `HTTP ${answer.status}`;
    try {
      why = JSON.parse(text).errors?.join("; ") ?? why;
    } catch { /* keep the status */ }
    throw new ApiFailure(answer.status, refused ?? `the target refused the file: ${why}`);
  }
  if (refused) throw new ApiFailure(0, refused);
  // Without a source checksum, the target's own digest (its download ETag) must be what was read.
  const provider = JSON.parse(text) as { download_url?: string };
  if (!job.checksum && provider.download_url) {
    const head = await fetch(provider.download_url, {
      method: "HEAD",
      headers: await authHeader(ctx.target.credentials),
    });
    const etag = head.headers.get("etag")?.replaceAll('"', "");
    const ours = sha256.digest("hex");
    if (head.ok && etag && etag !== ours) {
      throw new ApiFailure(
        0,
        `the target stored sha256 ${etag}, but ${ours} was read from ${hostOf(job.from)}`,
      );
    }
  }
  return count;
}

async function authHeader(credentials: Credentials): Promise<Record<string, string>> {
  const token = await credentials.token();
  return token ? { Authorization: `Bearer ${token}` } : {};
}
