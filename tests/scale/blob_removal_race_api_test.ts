// Two wharf nodes (PostgreSQL + Swift S3 blobs): node B deletes the only provider hosting content X while node A
// uploads the same X to another provider, at shifting offsets. The new provider's download must work on both
// nodes (at once, or after the uploader's second check 1 s later), then and after every removal was re-examined.

import { assertEquals } from "../helpers/assert.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";
import { createS3Client, parseBlobStore } from "../../lib/store/s3/client.ts";
import { HeadObjectCommand } from "@aws-sdk/client-s3";

const rounds = 10;
const graceMs = 1000;
const B = "/api/v1/box/admin/devbox";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fileOf(round: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(300_000 + round);
  for (let i = 0; i < out.length; i++) out[i] = (i * 17 + round * 5) & 0xff;
  return out;
}

clusterTest(
  "deleting the only provider of X on one node while another uploads X keeps X downloadable",
  {
    bucket: `wharf-removal-race-${Deno.pid}`,
    env: {
      WHARF_DOWNLOADS: "proxy",
      WHARF_REGISTRY_ORPHAN_GRACE: "0",
      WHARF_S3_REMOVAL_GRACE: `${graceMs}ms`,
    },
  },
  async (cluster) => {
    const s3 = createS3Client(cluster.env);
    cluster.defer(() => s3.destroy());
    const { bucket, prefix } = parseBlobStore(cluster.env.WHARF_BLOB_STORE!);
    for (const name of ["a", "b"]) await cluster.spawn(name);
    const urls = cluster.started.map((n) => n.url);
    const [a, b] = urls.map((u) => new RegistryClient(u));
    const admin = await a!.login("admin", "admin-password-1");
    const auth = { token: admin };
    assertEquals((await a!.post("/api/v1/boxes", { name: "devbox" }, auth)).status, 200);
    const put = async (url: string, path: string, data: Uint8Array<ArrayBuffer>) => {
      const r = await fetch(`${url}${path}`, { method: "PUT", body: data });
      return { status: r.status, text: await r.text() };
    };
    const download = async (url: string, version: string, provider: string) => {
      const r = await fetch(`${url}/admin/boxes/devbox/versions/${version}/providers/${provider}.box`, {
        headers: { Authorization: `Bearer ${admin}` },
      });
      return r.status === 200
        ? sha256Hex(new Uint8Array(await r.arrayBuffer()))
        : `${r.status} ${await r.text()}`;
    };

    for (let round = 0; round < rounds; round++) {
      const version = `1.0.${round}`;
      const V = `${B}/version/${version}`;
      assertEquals((await a!.post(`${B}/versions`, { version: { version } }, auth)).status, 200);
      for (const name of ["virtualbox", "libvirt"]) {
        const made = await a!.post(`${V}/providers`, { provider: { name } }, auth);
        assertEquals(made.status, 200, made.text);
      }
      const x = fileOf(round);
      const first = await a!.get(`${V}/provider/virtualbox/upload`, auth);
      assertEquals((await put(urls[0]!, new URL(first.body.upload_path).pathname, x)).status, 200);
      const second = await a!.get(`${V}/provider/libvirt/upload`, auth);
      const secondPath = new URL(second.body.upload_path).pathname;
      await eventually("B has the first provider", async () => {
        const r = await b!.get(`${V}/provider/virtualbox`, auth);
        return r.status === 200 && r.body.hosted === true ? true : undefined;
      });
      // X older than the removal grace (Swift rounds modification times up to the second).
      await sleep(graceMs + 1200);
      const [deleted, uploaded] = await Promise.all([
        sleep(round * 20).then(() => b!.delete(`${V}/provider/virtualbox`, auth)),
        put(urls[0]!, secondPath, x),
      ]);
      assertEquals(deleted.status, 200, deleted.text);
      assertEquals(uploaded.status, 200, uploaded.text);
      for (const [i, api] of [a!, b!].entries()) {
        await eventually(`round ${round}: the second provider uploaded on ${urls[i]}`, async () => {
          const r = await api.get(`${V}/provider/libvirt`, auth);
          return r.status === 200 && r.body.hosted === true ? true : undefined;
        });
        // Right away, or after the uploading node's second check (module comment of lib/store/s3/blobs.ts).
        const got = await eventually(
          `round ${round}: the file on ${urls[i]}`,
          async () => {
            const got = await download(urls[i]!, version, "libvirt");
            return got === sha256Hex(x) ? got : undefined;
          },
          graceMs + 2000,
          100,
        ).catch(() => download(urls[i]!, version, "libvirt"));
        if (got !== sha256Hex(x)) {
          const key = `${prefix}blobs/${sha256Hex(x)}`;
          const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
            .then((h) => `exists, modified ${h.LastModified?.toISOString()}`, (e) => String(e));
          console.log(`round ${round}: ${got}; the blob: ${head}; now ${new Date().toISOString()}`);
          console.log(cluster.started.map((n) => n.stderr()).join("\n"));
        }
        assertEquals(got, sha256Hex(x), `round ${round} on ${urls[i]}`);
      }
    }
    // Every removal of an X left because it was young has been looked at again by now.
    await sleep(graceMs + 2500);
    for (let round = 0; round < rounds; round++) {
      for (const url of urls) {
        assertEquals(await download(url, `1.0.${round}`, "libvirt"), sha256Hex(fileOf(round)), url);
      }
    }
  },
);
