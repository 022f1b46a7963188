// Where the offline tools (backup, restore, storage migrate) copy blobs from and to: a data directory's blobs/
// folder, or a bucket through the S3 blob store the nodes use (WHARF_BLOB_STORE). Writes go through the store's
// own ingest, which refuses bytes that do not hash to their name. Blobs are named by their sha256 and never
// change, so a copy taken at any moment after a snapshot is the snapshot's blob.

import { ConfigError } from "../errors.ts";
import type { S3Settings } from "./s3/settings.ts";
import { blobName, type Blobs } from "./blobs.ts";
import { BlobNotFoundError } from "./errors.ts";
import { BlobStore } from "./file/blobs.ts";
import { readDirOrEmpty } from "./file/fsutil.ts";

export interface BlobEndpoint {
  /** The blob's size and bytes, or undefined when the store does not hold it. */
  read(sha256: string): Promise<{ size: number; body: ReadableStream<Uint8Array> } | undefined>;
  /** Stores `body`, which must hash to `sha256`: other bytes are refused (DigestMismatchError) and not kept. */
  write(sha256: string, body: ReadableStream<Uint8Array>): Promise<void>;
  /** Every blob the store holds, with its size (a bucket: one paged listing, never a request per blob). */
  list(): AsyncGenerator<{ name: string; size: number }>;
  close(): void;
}

/** The target blob store holds a blob the copy does not name: nothing was copied (a ConfigError). */
export class BlobStoreNotEmptyError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = "BlobStoreNotEmptyError";
  }
}

/** A copy into a blob store, as its refusal names it: `where` it writes, the `copy` and its `source`. */
export interface BlobCopy {
  where: string;
  copy: string;
  source: string;
}

/**
 * One listing of `target` against the blobs a copy writes (`expected`): returns the size of each of them it holds
 * (left by an earlier, failed run of the same copy: content-addressed, so the same bytes; the copy skips those it
 * holds at their size), and refuses (BlobStoreNotEmptyError) a store holding any other blob, naming the first
 * one listed. Holds no more names than `expected` does.
 */
export async function heldForCopy(
  target: BlobEndpoint,
  expected: ReadonlySet<string>,
  { where, copy, source }: BlobCopy,
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for await (const { name, size } of target.list()) {
    if (!expected.has(name)) {
      throw new BlobStoreNotEmptyError(
        `${where} already holds blobs (${name}): ${copy} writes only into an empty store ` +
          `(or one holding only ${source}'s blobs, left by a failed ${copy} of it)`,
      );
    }
    sizes.set(name, size);
  }
  return sizes;
}

/** A data directory's blobs/ folder, which can also list its blobs. */
export interface BlobFolder extends BlobEndpoint {
  names(): Generator<string>;
}

/**
 * The blobs/ folder of a data directory. Read without opening its BlobStore (which would clean its tmp/ under a
 * running server); the store is opened at the first write, into a folder no server uses (a restore's target).
 */
export function folderBlobs(dataDir: string): BlobFolder {
  const dir = `${dataDir}/blobs`;
  let opened: Promise<BlobStore> | undefined;
  const shards = () =>
    readDirOrEmpty(dir).filter((e) => e.isDirectory && /^[0-9a-f]{2}$/.test(e.name)).map((e) =>
      `${dir}/${e.name}`
    );
  function* names(): Generator<string> {
    for (const shard of shards()) {
      for (const entry of readDirOrEmpty(shard)) if (blobName.test(entry.name)) yield entry.name;
    }
  }
  return {
    async read(sha256) {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(`${dir}/${sha256.slice(0, 2)}/${sha256}`, { read: true });
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return undefined;
        throw err;
      }
      // An open file stays readable if an orphan collection removes its name meanwhile.
      return { size: (await file.stat()).size, body: file.readable };
    },
    async write(sha256, body) {
      await ingestAs(await (opened ??= BlobStore.open(dir)), sha256, body);
    },
    names,
    async *list() {
      for (const shard of shards()) {
        for (const entry of readDirOrEmpty(shard)) {
          try {
            yield { name: entry.name, size: (await Deno.stat(`${shard}/${entry.name}`)).size };
          } catch (err) {
            if (!(err instanceof Deno.errors.NotFound)) throw err;
          }
        }
      }
    },
    close() {
      opened?.then((store) => store.close(), () => {});
    },
  };
}

/** A bucket, through the S3 blob store the nodes use. */
export async function bucketBlobs(settings: S3Settings): Promise<BlobEndpoint> {
  const { openBucket } = await import("./s3/open.ts");
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const { store, client, location } = await openBucket(settings, { downloads: "proxy", urlTtlMs: 60_000 });
  return {
    async read(sha256) {
      let response: Response;
      try {
        response = await store.respond(sha256, new Request(`http://backup/${sha256}`));
      } catch (err) {
        if (err instanceof BlobNotFoundError) return undefined;
        throw err;
      }
      return { size: Number(response.headers.get("Content-Length")), body: response.body! };
    },
    write: (sha256, body) => ingestAs(store, sha256, body),
    async *list() {
      const prefix = `${location.prefix}blobs/`;
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: location.bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) {
          yield { name: (object.Key ?? "").slice(prefix.length), size: object.Size ?? 0 };
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    close() {
      store.close();
      client.destroy();
    },
  };
}

/** Streams `body` into `store` under the name `sha256`, through the ingest an upload takes (it checks the name). */
async function ingestAs(store: Blobs, sha256: string, body: ReadableStream<Uint8Array>): Promise<void> {
  await store.ingest(body, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    digests: ["sha256"],
    expect: { algorithm: "sha256", hex: sha256 },
    mismatchMessage: (actual) => `blob ${sha256} reads back as ${actual}`,
  });
}
