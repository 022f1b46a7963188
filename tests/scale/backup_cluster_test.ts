// Online backup of a cluster (docs/operations.md#backups): `backup create` with the nodes' settings (PostgreSQL + Swift's
// S3 API) while a node takes writes, then restored into an embedded data directory and into a fresh database
// and bucket; each restored server holds the state at the snapshot's index, byte-identical blobs and the same
// events; a second restore into the now non-empty database is refused. A restore into a database killed (-9) or
// cut off from it mid-run leaves no wharf row behind, and running it again restores everything. Documents each at
// the JSON-value cap restore into a database under a small heap.

import postgres from "postgres";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { aliceWithDevbox, Client } from "../registry/helpers.ts";
import { rootSecret } from "../events/stream_helpers.ts";
import { sha256Hex } from "../../lib/store/backup/archive.ts";
import * as backup from "../foundation/backup_helpers.ts";
import { denseDocuments, plainManifest, writeCraftedArchive } from "../foundation/backup_crafted.ts";
import { bucketBlobs } from "../../lib/store/blob_endpoints.ts";
import { s3Settings } from "../../lib/store/s3/settings.ts";
import { clusterTest } from "./helpers.ts";
import { holdCheckpointRow, noWharfRows, wharfRows } from "./held_checkpoint.ts";

clusterTest(
  "a cluster's backup, taken under writes, restores into a data directory and into a fresh database and bucket",
  { bucket: "wharf-backup-source", env: { WHARF_TEST_ROUTES: "1", WHARF_S3_REMOVAL_GRACE: "1s" } },
  async (c) => {
    const node = await c.spawn("a");
    const api = new Client(node.url);
    const alice = await aliceWithDevbox(api);
    const files = { virtualbox: backup.content(1, 300_000), libvirt: backup.content(2, 1 << 20) };
    for (const [name, bytes] of Object.entries(files)) await backup.uploadProvider(api, alice, name, bytes);

    const work = await Deno.makeTempDir({ prefix: "wharf-backup-cluster-" });
    c.defer(() => Deno.remove(work, { recursive: true }));
    const acks: backup.Ack[] = [];
    const stop = { now: false };
    const loops = Array.from({ length: 4 }, (_, w) => backup.writeLoop(node.url, w, acks, stop));
    await new Promise((r) => setTimeout(r, 500));
    const before = [...acks];
    const archive = `${work}/cluster.wbak`;
    // The nodes' own settings: the database, the bucket, the root key.
    const made = await backup.runBackup(["create", "--output", archive, "--include-root-key"], c.env);
    stop.now = true;
    await Promise.all(loops);
    assertEquals(made.code, 0, made.stderr);
    assertStringIncludes(made.stdout, " 2 blobs ");
    const index = backup.snapshotIndex(made.stdout);
    assert(
      before.length > 0 && before.every((a) => a.index <= index),
      "every write acknowledged before is in it",
    );
    assert(acks.some((a) => a.index > index), "writes went on after the snapshot");
    const want = await backup.eventsUpTo(node.url, index);

    const started: ChildServer[] = [];
    c.defer(async () => {
      for (const s of started) {
        s.kill();
        await s.status;
      }
    });
    const check = async (server: ChildServer) => {
      started.push(server);
      await backup.assertStateAt(server.url, acks, index);
      for (const [name, bytes] of Object.entries(files)) {
        assertEquals(await backup.downloadSha(server.url, alice, name), sha256Hex(bytes), name);
      }
      assertEquals(await backup.eventsUpTo(server.url, index), want);
    };

    // Into an embedded data directory: no database, blobs in its folder, the root key restored as root.key.
    const dataDir = `${work}/embedded`;
    const embedded = await backup.runBackup(["restore", "--input", archive, "--data-dir", dataDir]);
    assertEquals(embedded.code, 0, embedded.stderr);
    await check(
      await spawnServer(dataDir, { WHARF_TEST_ROUTES: "1", WHARF_ACL_BOOTSTRAP_SECRET: rootSecret }),
    );

    // Into a fresh database and bucket, as a new cluster's first node would run.
    const fresh = {
      ...c.env,
      ...c.swift!.env("wharf-backup-restored"),
      WHARF_DATABASE_URL: await c.pg.createDatabase(),
    };
    const keyFile = `${work}/root.key`;
    const restored = await backup.runBackup(
      ["restore", "--input", archive, "--root-key-out", keyFile],
      fresh,
    );
    assertEquals(restored.code, 0, restored.stderr);
    assertEquals((await Deno.readTextFile(keyFile)).trim(), c.env.WHARF_ROOT_KEY);
    const nodeDir = `${work}/node-b`;
    await check(await spawnServer(nodeDir, { ...fresh, WHARF_NODE_NAME: "b" }));

    const again = await backup.runBackup(["restore", "--input", archive], fresh);
    assertEquals(again.code, 3, again.stderr);
    assertStringIncludes(again.stderr, "already holds wharf data");

    // A restore that dies mid-run (kill -9), or whose database connection is cut, leaves no wharf row: the same
    // restore run again is not refused, and restores everything.
    for (const failure of ["kill -9", "connection cut"] as const) {
      const target = {
        ...c.env,
        ...c.swift!.env(`wharf-backup-${failure === "kill -9" ? "killed" : "cut"}`),
        WHARF_DATABASE_URL: await c.pg.createDatabase(),
      };
      const db = postgres(target.WHARF_DATABASE_URL, { max: 2, onnotice: () => {} });
      c.defer(() => db.end({ timeout: 1 }));
      // The restore stops at the checkpoint row, well into its writes, until it is killed or cut off.
      const held = await holdCheckpointRow(db);
      if (failure === "kill -9") {
        const child = backup.spawnBackup(["restore", "--input", archive], target);
        await held.waiter(failure);
        child.kill("SIGKILL");
        await child.status;
      } else {
        const run = backup.runBackup(["restore", "--input", archive], target);
        await db`SELECT pg_terminate_backend(${await held.waiter(failure)})`;
        const cut = await run;
        assertEquals(cut.code, 1, cut.stderr);
      }
      await held.release();
      assertEquals(await wharfRows(db), noWharfRows, failure);
      const rerun = await backup.runBackup(["restore", "--input", archive], target);
      assertEquals(rerun.code, 0, rerun.stderr);
      const name = failure === "kill -9" ? "k" : "c";
      await check(await spawnServer(`${work}/node-${name}`, { ...target, WHARF_NODE_NAME: name }));
    }

    // Those were the archive's own blobs: a bucket holding any other blob is refused, and nothing is written.
    const other = {
      ...c.env,
      ...c.swift!.env("wharf-backup-other"),
      WHARF_DATABASE_URL: await c.pg.createDatabase(),
    };
    const stranger = backup.content(3, 1000);
    const bucket = await bucketBlobs(s3Settings(other).s3!);
    await bucket.write(sha256Hex(stranger), ReadableStream.from([stranger])).finally(() => bucket.close());
    const refused = await backup.runBackup(["restore", "--input", archive], other);
    assertEquals(refused.code, 3, refused.stderr);
    assertStringIncludes(refused.stderr, `already holds blobs (${sha256Hex(stranger)})`);
    const otherDb = postgres(other.WHARF_DATABASE_URL, { max: 1, onnotice: () => {} });
    c.defer(() => otherDb.end({ timeout: 1 }));
    assertEquals(await wharfRows(otherDb), noWharfRows);

    // Documents each one line at the JSON-value cap, into a database under a 256 MiB V8 heap: ~50 MB parsed each,
    // written an INSERT per 1 MiB of lines (the old restore gathered 2,000 parsed documents per INSERT: exit 133).
    const dense = `${work}/dense.wbak`;
    await writeCraftedArchive(
      dense,
      [denseDocuments("documents/test/items/000001.ndjson", 12)],
      (r) => plainManifest(r, 12),
    );
    const denseTarget = {
      ...c.env,
      ...c.swift!.env("wharf-backup-dense"),
      WHARF_DATABASE_URL: await c.pg.createDatabase(),
    };
    const denseRun = await backup.runBackupMeasured(
      ["restore", "--input", dense],
      ["--v8-flags=--max-old-space-size=256"],
      denseTarget,
    );
    console.log(
      `restore of dense.wbak into a database: exit ${denseRun.code}, peak RSS ${denseRun.peakKib >> 10} MiB`,
    );
    assertEquals(denseRun.code, 0, denseRun.stderr);
    assertStringIncludes(denseRun.stdout, " 12 documents");
    const denseDb = postgres(denseTarget.WHARF_DATABASE_URL, { max: 1, onnotice: () => {} });
    c.defer(() => denseDb.end({ timeout: 1 }));
    const [row] =
      await denseDb`SELECT count(*)::int AS n FROM wharf_documents WHERE collection = 'test/items'`;
    assertEquals(row!.n, 12);
  },
);
