// The S3 settings (WHARF_BLOB_STORE=s3://BUCKET[/PREFIX], WHARF_S3_ENDPOINT, WHARF_S3_REGION, AWS_* credentials)
// and a client set up for S3-compatible stores (path-style; checksums only where required, as Swift and
// Ceph refuse the SDK's default aws-chunked uploads).

import { CreateBucketCommand, HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { ConfigError } from "../../errors.ts";

export interface S3Location {
  bucket: string;
  /** "" or a prefix ending in "/". */
  prefix: string;
}

export function parseBlobStore(value: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (!m) {
    throw new ConfigError(
      `WHARF_BLOB_STORE must be "file" or s3://BUCKET[/PREFIX], got ${JSON.stringify(value)}`,
    );
  }
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  return { bucket: m[1]!, prefix: prefix ? `${prefix}/` : "" };
}

export function createS3Client(env: Record<string, string | undefined>): S3Client {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  return new S3Client({
    region: env.WHARF_S3_REGION ?? env.AWS_REGION ?? "us-east-1",
    ...(env.WHARF_S3_ENDPOINT ? { endpoint: env.WHARF_S3_ENDPOINT } : {}),
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  });
}

/** Creates the bucket when it is missing (another node creating it at the same moment is fine). */
export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
    return;
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== 404) throw err;
  }
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name !== "BucketAlreadyOwnedByYou" && name !== "BucketAlreadyExists") throw err;
  }
}
