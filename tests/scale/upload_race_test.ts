// One upload URL PUT through two wharf nodes at the same instant (PostgreSQL + Swift S3 blobs): exactly one PUT
// consumes it, both nodes then serve that file with one checksum, one ProviderUploaded event is streamed, and the
// bucket ends holding that blob once (the loser's bytes are collected).

import { assert, assertEquals } from "../helpers/assert.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { createS3Client, parseBlobStore } from "../../lib/store/s3/client.ts";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { subscribe } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const rounds = 6;
const V = "/api/v1/box/admin/devbox/version/1.0.0";

function fileOf(round: number, node: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(300_000 + round * 1000 + node);
  for (let i = 0; i < out.length; i++) out[i] = (i * 13 + round * 7 + node * 101) & 0xff;
  return out;
}

clusterTest(
  "one upload URL PUT on two nodes at once is consumed once; the bucket keeps the winner's blob once",
  {
    bucket: `wharf-upload-race-${Deno.pid}`,
    env: {
      WHARF_DOWNLOADS: "proxy",
      WHARF_REGISTRY_ORPHAN_GRACE: "0",
      // Unreferenced blobs younger than this are left and removed once older (production: 10 minutes).
      WHARF_S3_REMOVAL_GRACE: "1s",
      WHARF_EVENTS_HEARTBEAT_MS: "200",
    },
  },
  async (cluster) => {
    const s3 = createS3Client(cluster.env);
    cluster.defer(() => s3.destroy());
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const urls = cluster.started.map((n) => n.url);
    const apis = urls.map((u) => new RegistryClient(u));
    const admin = await apis[0]!.login("admin", "admin-password-1");
    assertEquals((await apis[0]!.post("/api/v1/boxes", { name: "devbox" }, { token: admin })).status, 200);
    await apis[0]!.post("/api/v1/box/admin/devbox/versions", { version: { version: "1.0.0" } }, {
      token: admin,
    });
    const made = await apis[0]!.post(`${V}/providers`, { provider: { name: "virtualbox" } }, {
      token: admin,
    });
    assertEquals(made.status, 200, made.text);
    const { bucket, prefix } = parseBlobStore(cluster.env.WHARF_BLOB_STORE!);
    const objects = async (under: string) => {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${under}` }));
      return (page.Contents ?? []).map((o) => o.Key!.slice(prefix.length + under.length)).sort();
    };

    const winners: string[] = [];
    for (let round = 0; round < rounds; round++) {
      // Prepared on one node; its secret id is the same URL path on the other.
      const prepared = await apis[round % 2]!.get(`${V}/provider/virtualbox/upload`, { token: admin });
      assertEquals(prepared.status, 200, prepared.text);
      const path = new URL(prepared.body.upload_path).pathname;
      await eventually("the upload session on both nodes", async () => {
        // A PUT without a body touches nothing: 422 (empty file) once the node knows the session, else 404.
        const r = await fetch(`${urls[1 - round % 2]}${path}`, { method: "PUT", body: "" });
        await r.body?.cancel();
        return r.status === 422 ? true : undefined;
      });
      const files = [0, 1].map((node) => fileOf(round, node));
      const answers = await Promise.all(files.map(async (data, node) => {
        const r = await fetch(`${urls[node]}${path}`, { method: "PUT", body: data });
        return { status: r.status, text: await r.text() };
      }));
      const texts = JSON.stringify(answers);
      assertEquals(answers.filter((a) => a.status === 200).length, 1, `round ${round}: ${texts}`);
      assertEquals(answers.find((a) => a.status !== 200)!.status, 404, `round ${round}: ${texts}`);
      const winner = sha256Hex(files[answers.findIndex((a) => a.status === 200)]!);
      winners.push(winner);
      if (round === 0) {
        const released = await apis[0]!.put(`${V}/release`, undefined, { token: admin });
        assertEquals(released.status, 200, released.text);
      }

      // Both nodes: the metadata's checksum and the downloaded bytes are the winner's.
      for (const url of urls) {
        await eventually(`round ${round}: the winner's checksum on ${url}`, async () => {
          const meta = await (await fetch(`${url}/admin/devbox`, {
            headers: { Authorization: `Bearer ${admin}` },
          })).json();
          const p = meta.versions?.[0]?.providers[0];
          return p?.checksum === winner && p.checksum_type === "sha256" ? true : undefined;
        });
        const download = await fetch(`${url}/admin/boxes/devbox/versions/1.0.0/providers/virtualbox.box`, {
          headers: { Authorization: `Bearer ${admin}` },
        });
        assertEquals(download.status, 200);
        assertEquals(sha256Hex(new Uint8Array(await download.arrayBuffer())), winner);
      }
      // The bucket keeps exactly the current file: the loser's bytes and the last round's file are collected.
      await eventually(
        `round ${round}: only the winner's blob in the bucket`,
        async () => {
          const [blobs, tmp] = [await objects("blobs/"), await objects("tmp/")];
          return blobs.length === 1 && blobs[0] === winner && tmp.length === 0 ? true : undefined;
        },
        10_000,
        100,
      );
    }

    // Each node streams one ProviderUploaded per round, the winners' files in order.
    for (const url of urls) {
      const stream = await subscribe(url, "index=1&topic=Box");
      const frames = await stream.dataUntilQuiet(1500);
      await stream.close();
      const uploaded = frames.flatMap((f) => f.Events ?? []).filter((e) => e.Type === "ProviderUploaded");
      assertEquals(uploaded.map((e) => (e.Payload as { sha256: string }).sha256), winners, url);
    }
    assert(cluster.started.every((n) => !n.stderr().includes("Uncaught")));
  },
);
