// `storage migrate`: a data directory with all three families' data, copied into PostgreSQL + S3, answers the
// same reads byte for byte on a node started on the copy, and its stream replays the same events and indexes. A
// migrate killed (-9) or cut off from its database mid-run leaves no wharf row, and running it again is not
// refused and copies everything. A bucket holding a blob the data directory does not have is refused, as
// `backup restore` refuses one, and nothing is written.

import postgres from "postgres";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { startSwift, swiftSkipReason } from "../fixtures/swift.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, fastEnv, login } from "../authmethods/helpers.ts";
import { nodeEvent, publish, rootSecret } from "../events/stream_helpers.ts";
import { runStorageCli } from "../../cli/storage/mod.ts";
import { holdCheckpointRow, noWharfRows, wharfRows } from "./held_checkpoint.ts";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { bucketBlobs } from "../../lib/store/blob_endpoints.ts";
import { sha256Hex } from "../../lib/store/backup/archive.ts";
import { createS3Client } from "../../lib/store/s3/client.ts";
import { s3Settings } from "../../lib/store/s3/settings.ts";

const skip = postgresSkipReason ?? swiftSkipReason;
if (skip) console.warn(`storage migrate tests skipped: ${skip}`);

const env = {
  ...fastEnv,
  WHARF_PUBLIC_URL: "https://wharf.example.com",
  WHARF_REGISTRY_ADMIN_PASSWORD: "admin-password-1",
  WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
  WHARF_EVENTS_HEARTBEAT_MS: "100",
};

async function streamText(url: string): Promise<string> {
  // The backlog, then the stream is cut: what it served is compared as text.
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/event/stream?index=1`, {
    headers: { "X-Nomad-Token": rootSecret },
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  let text = "";
  const deadline = Date.now() + 1500;
  while (Date.now() < deadline) {
    const next = await Promise.race([
      reader.read(),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline - Date.now())),
    ]);
    if (!next || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  await reader.cancel().catch(() => {});
  controller.abort();
  // Let the server see the stream's connection end before anything shuts it down.
  await new Promise((r) => setTimeout(r, 300));
  // Heartbeats ({}) come at their own pace: only data lines count.
  return text.split("\n").filter((l) => l.startsWith('{"Events"') || l.includes('"Index"')).join("\n");
}

/** Runs `storage migrate` in this process; returns its exit code and every line it printed. */
async function migrate(dataDir: string, target: Record<string, string>) {
  const lines: string[] = [];
  const push = (l: string) => lines.push(l);
  const code = await runStorageCli(["migrate", "--data-dir", dataDir], target, push, push);
  return { code, output: lines.join("\n"), lines };
}

/** Starts `deno run -A main.ts storage migrate` as a process of its own, for a kill mid-run. */
function spawnMigrate(dataDir: string, target: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../main.ts", import.meta.url).pathname, "storage", "migrate"],
    env: { ...target, WHARF_DATA_DIR: dataDir },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

Deno.test({
  name:
    "storage migrate copies a data directory into PostgreSQL + S3: same reads, same stream, refuses twice; " +
    "killed or cut off mid-run it leaves no row and runs again",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const [pg, swift] = await Promise.all([startPostgres(), startSwift()]);
    const dataDir = await Deno.makeTempDir({ prefix: "wharf-migrate-" });
    const nodeDir = await Deno.makeTempDir({ prefix: "wharf-migrated-" });
    try {
      // All three families' data on the embedded store.
      const srv = await startTestServer(env, dataDir);
      const registry = new RegistryClient(srv.url);
      const admin = await registry.login("admin", "admin-password-1");
      assertEquals((await registry.post("/api/v1/boxes", { name: "devbox" }, { token: admin })).status, 200);
      const V = "/api/v1/box/admin/devbox/version/1.0.0";
      await registry.post("/api/v1/box/admin/devbox/versions", { version: { version: "1.0.0" } }, {
        token: admin,
      });
      await registry.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token: admin });
      const { upload_path } = (await registry.get(`${V}/provider/virtualbox/upload`, { token: admin })).body;
      const put = await fetch(upload_path.replace("https://wharf.example.com", srv.url), {
        method: "PUT",
        body: new Uint8Array(300_000).fill(7),
      });
      assertEquals(put.status, 200, await put.text());
      assertEquals((await registry.put(`${V}/release`, undefined, { token: admin })).status, 200);
      const download = "/admin/boxes/devbox/versions/1.0.0/providers/virtualbox.box";
      const auth0 = { headers: { Authorization: `Bearer ${admin}` } };
      assertEquals((await fetch(srv.url + download, auth0).then((r) => r.arrayBuffer())).byteLength, 300_000);
      const anon = new AuthClient(srv.url);
      const scope = await anon.get("/v1/auth-methods?scope_id=global");
      const primary = scope.body.items.find((m: { is_primary?: boolean }) => m.is_primary);
      const auth = new AuthClient(srv.url, await login(anon, primary.id, "admin", adminPassword));
      assertEquals(
        (await auth.post("/v1/auth-methods", { scope_id: "global", type: "password", version: 0 })).status,
        200,
      );
      for (let i = 0; i < 5; i++) await publish(srv.url, [nodeEvent(`n${i}`)]);
      const reads = [
        "/api/v1/box/admin/devbox",
        "/admin/devbox",
        "/api/v1/search?q=devbox",
        "/v1/auth-methods?scope_id=global",
        "/v1/acl/tokens",
        "/v1/acl/policies",
      ];
      const read = async (url: string) => {
        const out: string[] = [];
        for (const path of reads) {
          const r = await fetch(url + path, {
            headers: {
              Authorization: `Bearer ${admin}`,
              "X-Nomad-Token": rootSecret,
              Accept: "application/json",
            },
          });
          // A list token encodes the time and index of the request that made it: the one thing that may differ.
          out.push(
            `${path} ${r.status} ${(await r.text()).replace(/"list_token":"[^"]*"/, '"list_token":…')}`,
          );
        }
        return out;
      };
      const before = await read(srv.url);
      const streamBefore = await streamText(srv.url);
      assert(streamBefore.includes('"Key":"n4"'));
      const rootKey = (await Deno.readTextFile(`${dataDir}/root.key`)).trim();
      await srv.stop({ keepData: true });
      // As if the server had crashed after writing the documents and before the manifest: the checkpoint lags
      // the log by 5 batches, which the migrated nodes replay from the log table.
      const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
      assert(manifest.checkpointIndex > 10);
      await Deno.writeTextFile(
        `${dataDir}/manifest.json`,
        JSON.stringify({ checkpointIndex: manifest.checkpointIndex - 5 }),
      );

      const newTarget = async (bucket: string) => ({
        ...swift.env(bucket),
        WHARF_DATABASE_URL: await pg.createDatabase(),
        WHARF_DOWNLOADS: "proxy",
      });
      // A node started on a migrated database and bucket answers every read, the stream and the blob as before.
      const checkNode = async (target: Record<string, string>, name: string) => {
        const node = await startTestServer(
          { ...env, ...target, WHARF_ROOT_KEY: rootKey },
          `${nodeDir}/${name}`,
        );
        try {
          assertEquals(await read(node.url), before, name);
          assertEquals(await streamText(node.url), streamBefore, name);
          const file = await fetch(node.url + download, auth0);
          assertEquals(file.status, 200, name);
          assertEquals((await file.arrayBuffer()).byteLength, 300_000, name);
        } finally {
          await node.stop({ keepData: true });
        }
      };

      const target = await newTarget("wharf-migrated");
      const first = await migrate(dataDir, target);
      assertEquals(first.code, 0, first.output);
      assert(first.lines.some((l) => l.startsWith("verified:")), first.output);
      const atCheckpoint = `(checkpoint at index ${manifest.checkpointIndex - 5})`;
      assert(first.lines.some((l) => l.startsWith("documents: ") && l.endsWith(atCheckpoint)), first.output);
      assert(first.lines.some((l) => l.startsWith("blobs: 1 copied")), first.output);
      const again = await migrate(dataDir, target);
      assertEquals(again.code, 2, again.output);
      assert(again.output.includes("already holds wharf data"), again.output);
      const db = postgres(target.WHARF_DATABASE_URL, { max: 1, onnotice: () => {} });
      const migrated = await wharfRows(db).finally(() => db.end({ timeout: 1 }));
      // The head is the log's last index; the checkpoint the data directory's (5 behind).
      assertEquals([migrated.head, migrated.checkpoint], [
        manifest.checkpointIndex,
        manifest.checkpointIndex - 5,
      ]);
      await checkNode(target, "migrated");

      // A migrate that dies mid-run (kill -9), or whose database connection is cut, leaves no wharf row: the
      // same migrate run again is not refused, and copies everything.
      for (const failure of ["kill -9", "connection cut"] as const) {
        const name = failure === "kill -9" ? "killed" : "cut";
        const failed = await newTarget(`wharf-migrate-${name}`);
        const db = postgres(failed.WHARF_DATABASE_URL, { max: 2, onnotice: () => {} });
        try {
          // The migrate stops at the checkpoint row, well into its writes, until it is killed or cut off.
          const held = await holdCheckpointRow(db);
          if (failure === "kill -9") {
            const child = spawnMigrate(dataDir, failed);
            await held.waiter(failure);
            child.kill("SIGKILL");
            await child.status;
          } else {
            const run = migrate(dataDir, failed);
            await db`SELECT pg_terminate_backend(${await held.waiter(failure)})`;
            const cut = await run;
            assertEquals(cut.code, 1, cut.output);
          }
          await held.release();
          assertEquals(await wharfRows(db), noWharfRows, failure);
          const rerun = await migrate(dataDir, failed);
          assertEquals(rerun.code, 0, rerun.output);
          assert(rerun.lines.some((l) => l.startsWith("verified:")), rerun.output);
          assertEquals(await wharfRows(db), migrated, failure);
        } finally {
          await db.end({ timeout: 1 });
        }
        await checkNode(failed, name);
      }

      // A bucket holding a blob the data directory does not have: refused before anything is copied into it or
      // written to the database (exit 2, as a database holding wharf data), in `backup restore`'s words.
      const other = await newTarget("wharf-migrate-other");
      const stranger = new Uint8Array(1000).fill(3);
      const settings = s3Settings(other).s3!;
      const bucket = await bucketBlobs(settings);
      await bucket.write(sha256Hex(stranger), ReadableStream.from([stranger])).finally(() => bucket.close());
      const refused = await migrate(dataDir, other);
      assertEquals(refused.code, 2, refused.output);
      assert(
        refused.output.includes(
          `s3://wharf-migrate-other already holds blobs (${
            sha256Hex(stranger)
          }): migrate writes only into an ` +
            "empty store (or one holding only this data directory's blobs, left by a failed migrate of it)",
        ),
        refused.output,
      );
      const client = createS3Client(settings.env);
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: "wharf-migrate-other", Prefix: "blobs/" }),
      )
        .finally(() => client.destroy());
      assertEquals(listed.Contents?.map((o) => o.Key), [`blobs/${sha256Hex(stranger)}`]);
      const otherDb = postgres(other.WHARF_DATABASE_URL, { max: 1, onnotice: () => {} });
      assertEquals(await wharfRows(otherDb).finally(() => otherDb.end({ timeout: 1 })), noWharfRows);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
      await Deno.remove(nodeDir, { recursive: true });
      await Promise.all([pg.stop(), swift.stop()]);
    }
  },
});
