// Where a backup reads blobs from and a restore writes them to: a data directory's blobs/ folder, or an S3
// bucket through the same settings the nodes use (WHARF_BLOB_STORE). Blobs are named by their sha256 and never
// change, so a copy taken at any moment after the snapshot is the snapshot's blob.

import type { S3Settings } from "../s3/settings.ts";
import type { Blobs } from "../blobs.ts";
import { BlobNotFoundError } from "../errors.ts";
import { ensureDir, readDirOrEmpty, tempSuffix, writeAll } from "../file/fsutil.ts";

export interface BlobEndpoint {
  /** The blob's size and bytes, or undefined when the store does not hold it. */
  read(sha256: string): Promise<{ size: number; body: ReadableStream<Uint8Array> } | undefined>;
  /** Stores `body`, which must hash to `sha256` (checked on the way in). */
  write(sha256: string, body: ReadableStream<Uint8Array>): Promise<void>;
  /** Whether the store holds any blob (a restore refuses a store that does). */
  isEmpty(): Promise<boolean>;
  close(): void;
}

/** The blobs/ folder of a data directory, read without opening its BlobStore (which would clean its tmp/). */
export function folderBlobs(dataDir: string): BlobEndpoint {
  const path = (sha256: string) => `${dataDir}/blobs/${sha256.slice(0, 2)}/${sha256}`;
  return {
    async read(sha256) {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(path(sha256), { read: true });
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return undefined;
        throw err;
      }
      // An open file stays readable if an orphan collection removes its name meanwhile.
      return { size: (await file.stat()).size, body: file.readable };
    },
    async write(sha256, body) {
      await ensureDir(`${dataDir}/blobs/${sha256.slice(0, 2)}`);
      // Written whole under a temp name, then renamed: a blob file always has every byte of its name's content.
      const tmp = `${path(sha256)}${tempSuffix}`;
      const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
      try {
        for await (const chunk of body) await writeAll(file, chunk);
        await file.syncData();
      } finally {
        file.close();
      }
      await Deno.rename(tmp, path(sha256));
    },
    isEmpty() {
      const shards = readDirOrEmpty(`${dataDir}/blobs`).filter((e) =>
        e.isDirectory && /^[0-9a-f]{2}$/.test(e.name)
      );
      return Promise.resolve(
        shards.every((shard) => readDirOrEmpty(`${dataDir}/blobs/${shard.name}`).length === 0),
      );
    },
    close() {},
  };
}

/** A bucket, through the S3 blob store the nodes use (ingest checks the sha256 on the way in). */
export async function bucketBlobs(settings: S3Settings): Promise<BlobEndpoint> {
  const { createS3Client, ensureBucket, parseBlobStore } = await import("../s3/client.ts");
  const { S3BlobStore } = await import("../s3/blobs.ts");
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const location = parseBlobStore(settings.url);
  const client = createS3Client(settings.env);
  await ensureBucket(client, location.bucket);
  const store: Blobs = new S3BlobStore(client, location, { downloads: "proxy", urlTtlMs: 60_000 });
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
    async write(sha256, body) {
      await store.ingest(body, {
        maxBytes: Number.MAX_SAFE_INTEGER,
        digests: ["sha256"],
        expect: { algorithm: "sha256", hex: sha256 },
      });
    },
    async isEmpty() {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: location.bucket, Prefix: `${location.prefix}blobs/`, MaxKeys: 1 }),
      );
      return (page.Contents ?? []).length === 0;
    },
    close() {
      store.close();
      client.destroy();
    },
  };
}
