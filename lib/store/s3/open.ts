// Opens the bucket WHARF_BLOB_STORE names (creating it when missing) as an S3BlobStore: for a node, and for the
// offline tools that copy blobs into or out of it (storage migrate, backup).

import type { S3Client } from "@aws-sdk/client-s3";
import { createS3Client, ensureBucket, parseBlobStore, type S3Location } from "./client.ts";
import { type S3BlobOptions, S3BlobStore } from "./blobs.ts";
import type { S3Settings } from "./settings.ts";

export interface OpenedBucket {
  store: S3BlobStore;
  client: S3Client;
  location: S3Location;
}

export async function openBucket(settings: S3Settings, options: S3BlobOptions): Promise<OpenedBucket> {
  const location = parseBlobStore(settings.url);
  const client = createS3Client(settings.env);
  await ensureBucket(client, location.bucket);
  return { store: new S3BlobStore(client, location, options), client, location };
}
