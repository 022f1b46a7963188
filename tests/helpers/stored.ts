// What a test server stored, read the same way on every backend WHARF_TEST_STORAGE selects: the events of its
// commit log, everything it wrote as text (files, database rows), the leftovers of unfinished uploads, and its
// storage opened offline with the server's settings.

import {
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import postgres from "postgres";
import { DataDir } from "../../lib/store/mod.ts";
import { storageSettings } from "../../lib/store/storage_settings.ts";
import { createS3Client, parseBlobStore } from "../../lib/store/s3/client.ts";
import type { TestServer } from "./server.ts";

/** The batches the running server's log still holds, as stored (an NDJSON line or a wharf_log row each). */
export async function loggedLines(srv: TestServer): Promise<string[]> {
  const log = srv.server.data.log;
  const lines: string[] = [];
  for await (const { line } of log.read(log.firstIndex)) lines.push(line);
  return lines;
}

/** Every event of the batches the running server's log still holds, oldest first. */
export async function loggedEvents(srv: TestServer): Promise<Array<Record<string, unknown>>> {
  return (await loggedLines(srv)).flatMap((line) => JSON.parse(line).Events ?? []);
}

/**
 * uploadLeftovers once it is empty, or what is left after `ms`: on S3 an upload keeps its tmp/ object until its
 * blob's second check (docs/scale-out.md, "Blobs"), a moment after the answer.
 */
export async function settledUploadLeftovers(srv: TestServer, ms = 15_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  let left = await uploadLeftovers(srv);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await uploadLeftovers(srv);
  }
  return left;
}

/** Temporary files (data dir) or tmp/ objects and open multipart uploads (S3) that uploads left behind. */
export async function uploadLeftovers(srv: TestServer): Promise<string[]> {
  const store = srv.env.WHARF_BLOB_STORE ?? "file";
  if (store === "file") {
    return (await Array.fromAsync(Deno.readDir(`${srv.dataDir}/blobs/tmp`))).map((e) => e.name);
  }
  const { bucket, prefix } = parseBlobStore(store);
  const client = createS3Client(srv.env);
  try {
    const objects = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}tmp/` }));
    const uploads = await client.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: `${prefix}tmp/` }),
    );
    return [
      ...(objects.Contents ?? []).map((o) => o.Key!),
      ...(uploads.Uploads ?? []).map((u) => `multipart ${u.Key}`),
    ];
  } finally {
    client.destroy();
  }
}

/** The stopped server's storage, opened as an offline command would (close it before starting again). */
export function openStoredData(srv: TestServer): Promise<DataDir> {
  return DataDir.open(srv.dataDir, storageSettings(srv.env));
}

/** Everything the server wrote, as text to search: each file under its data dir and each row of its database. */
export async function storedText(srv: TestServer): Promise<Array<{ where: string; text: string }>> {
  const found: Array<{ where: string; text: string }> = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        found.push({ where: path, text: new TextDecoder().decode(await Deno.readFile(path)) });
      }
    }
  };
  await walk(srv.dataDir);
  const url = srv.env.WHARF_DATABASE_URL;
  if (!url) return found;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`;
    for (const { tablename } of tables) {
      const quoted = `"${String(tablename).replaceAll('"', '""')}"`;
      const rows = await sql.unsafe(`SELECT t::text AS row FROM ${quoted} t`);
      found.push({ where: `table ${tablename}`, text: rows.map((r) => r.row as string).join("\n") });
    }
  } finally {
    await sql.end();
  }
  return found;
}

/** Rewrites a stored blob in place behind the server's back (a bad disk, a tampered bucket). */
export async function alterBlob(
  srv: TestServer,
  sha256: string,
  change: (bytes: Uint8Array) => void,
): Promise<void> {
  const store = srv.env.WHARF_BLOB_STORE ?? "file";
  if (store === "file") {
    const path = `${srv.dataDir}/blobs/${sha256.slice(0, 2)}/${sha256}`;
    const bytes = await Deno.readFile(path);
    change(bytes);
    await Deno.writeFile(path, bytes);
    return;
  }
  const { bucket, prefix } = parseBlobStore(store);
  const client = createS3Client(srv.env);
  try {
    const key = `${prefix}blobs/${sha256}`;
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = await got.Body!.transformToByteArray();
    change(bytes);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
  } finally {
    client.destroy();
  }
}
