// Online backups of a running server's data directory (docs/operations.md#backups), through `main.ts backup …` child
// processes against a spawned server under concurrent writes: the restore holds every write acknowledged before
// the backup started and nothing half-written, blobs byte-identical, the same events at the same indexes; a
// kill -9 mid-backup leaves the server unharmed and no file by the final name; restore refuses a non-empty
// target; a flipped byte fails verify and restore naming the entry; a blob entry rewritten together with its
// checksums fails verify and restore, naming it; an incremental holds only new blobs; a log line a backup only
// keeps is checked: a sealed segment's cut or garbled line fails it, the last segment's torn tail is left out; the
// documents streamed from packs and files are each one's state as the server loads it; an entry's 8 MiB are bytes.

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { ADMIN_PASSWORD, aliceWithDevbox, Client } from "../registry/helpers.ts";
import { type Frame, rootSecret, subscribe } from "../events/stream_helpers.ts";
import { sha256Hex } from "../../lib/store/backup/archive.ts";
import {
  type Ack,
  ArchiveReader,
  assertStateAt,
  content,
  downloadSha,
  eventsUpTo,
  runBackup,
  snapshotIndex,
  spawnBackup,
  uploadProvider,
  writeLoop,
} from "./backup_helpers.ts";

const serverEnv = {
  WHARF_TEST_ROUTES: "1",
  WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
  WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
  // Checkpoints and segment rolls happen many times while a backup reads the directory.
  WHARF_CHECKPOINT_INTERVAL: "20ms",
  WHARF_EVENTS_SEGMENT_INDEXES: "150",
  // Retention removes old segments while the backup reads them too.
  WHARF_EVENTS_RETAIN_INDEXES: "400",
};
const writers = 8;

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test({
  name: "backup of a running data directory: consistent under writes, kill -9 safe, verified, incremental",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const work = await Deno.makeTempDir({ prefix: "wharf-backup-" });
    const source = `${work}/source`;
    let server: ChildServer | undefined;
    let restored: ChildServer | undefined;
    try {
      server = await spawnServer(source, serverEnv);
      const api = new Client(server.url);
      const alice = await aliceWithDevbox(api);
      const files = { virtualbox: content(1, 300_000), libvirt: content(2, 16 << 20) };
      for (const [name, bytes] of Object.entries(files)) await uploadProvider(api, alice, name, bytes);

      // Every batch as the source streamed it, read live from the start (retention drops the old ones later).
      const live = await subscribe(server.url, "");
      const streamed: Frame[] = [];
      const reading = (async () => {
        for (let f = await live.nextData(5_000); f; f = await live.nextData(5_000).catch(() => undefined)) {
          streamed.push(f);
        }
      })();
      const acks: Ack[] = [];
      const stop = { now: false };
      const loops = Array.from({ length: writers }, (_, w) => writeLoop(server!.url, w, acks, stop));
      const full = `${work}/full.wbak`;
      let index = 0;
      let ackedBefore: Ack[] = [];
      await t.step(
        "a backup taken under concurrent writes restores every write acknowledged before it",
        async () => {
          // Enough writes that retention (400 indexes, segments of 150) has removed the first segments, however
          // slow the machine: the restore must then start at the retention start, not at index 1.
          await new Promise((r) => setTimeout(r, 700));
          await waitFor(() => acks.some((a) => a.index > 800), 60_000);
          ackedBefore = [...acks];
          const during = acks.length;
          const made = await runBackup([
            "create",
            "--data-dir",
            source,
            "--output",
            full,
            "--include-root-key",
          ]);
          const writtenDuring = acks.length - during;
          stop.now = true;
          await Promise.all(loops);
          assertEquals(made.code, 0, made.stderr);
          assertMatch(made.stdout, /^backup .* snapshot at index \d+ .* 2 blobs .*root key included/);
          // Writes went on while the backup read the directory.
          assert(writtenDuring > 20, `only ${writtenDuring} writes were acknowledged during the backup`);
          assert(!await exists(`${full}.partial`), "no partial file is left");
          assert(!await exists(`${full}.spool`), "no spool of documents is left");
          index = snapshotIndex(made.stdout);
          assert(
            ackedBefore.every((a) => a.index <= index),
            "the snapshot is after every write acknowledged before it",
          );
          assert(
            acks.some((a) => a.index > index),
            "writes acknowledged after the snapshot exist (so the test can fail)",
          );

          const verified = await runBackup(["verify", "--input", full]);
          assertEquals(verified.code, 0, verified.stderr);
          assertStringIncludes(verified.stdout, `intact`);

          const target = `${work}/restored`;
          const r = await runBackup(["restore", "--input", full, "--data-dir", target]);
          assertEquals(r.code, 0, r.stderr);
          assertStringIncludes(r.stdout, `snapshot at index ${index}`);
          const back = restored = await spawnServer(target, serverEnv);
          await assertStateAt(back.url, acks, index);
          // Blobs byte-identical; alice's token, signed under the restored root key, still works.
          for (const [name, bytes] of Object.entries(files)) {
            assertEquals(await downloadSha(back.url, alice, name), sha256Hex(bytes), name);
          }
          // The restored server's event stream replays the same batches at the same indexes.
          const got = await eventsUpTo(back.url, index);
          const first = got[0]!.Index!;
          assert(first > 1, `retention dropped the oldest batches before the snapshot (first ${first})`);
          await waitFor(() => streamed.at(-1)!.Index! >= index);
          const want = streamed.filter((f) => f.Index! >= first && f.Index! <= index);
          assert(want.length > 100, `${want.length} batches with events`);
          assertEquals(got.map((f) => f.Index), want.map((f) => f.Index));
          assertEquals(got, want);
          // And goes on from there.
          const next = await fetch(`${back.url}/v1/_test/items/after-restore`, {
            method: "PUT",
            body: "{}",
          });
          assertEquals((await next.json()).index, index + 1);
          restored.kill();
          await restored.status;
          restored = undefined;
        },
      );

      await t.step(
        "kill -9 of a backup mid-run leaves the server unharmed and no file by the final name",
        async () => {
          const killed = `${work}/killed.wbak`;
          const child = spawnBackup(["create", "--data-dir", source, "--output", killed]);
          // Killed once it is writing (the 6 MiB blob takes a moment to copy).
          for (
            let i = 0;
            i < 2000 && !(await Deno.stat(`${killed}.partial`).then((s) => s.size > 1 << 20, () => false));
            i++
          ) {
            await new Promise((r) => setTimeout(r, 5));
          }
          assert(await exists(`${killed}.partial`), "the backup was writing when it was killed");
          child.kill("SIGKILL");
          const status = await child.status;
          assertEquals(status.signal, "SIGKILL");
          assert(!await exists(killed), "no archive by the final name after a kill -9");
          assert(
            !await exists(`${killed}.spool`),
            "no spool of documents is left (it is unlinked once open)",
          );
          const res = await fetch(`${server!.url}/v1/_test/items/after-kill`, {
            method: "PUT",
            body: '{"ok":1}',
          });
          assertEquals(res.status, 200);
          await res.body?.cancel();
          assertEquals(await downloadSha(server!.url, alice, "libvirt"), sha256Hex(files.libvirt));
          // A partial file is never taken for a backup.
          if (await exists(`${killed}.partial`)) {
            const v = await runBackup(["verify", "--input", `${killed}.partial`]);
            assertEquals(v.code, 1, v.stdout);
          }
        },
      );

      await t.step("restore refuses a target that holds anything", async () => {
        const busy = `${work}/busy`;
        await Deno.mkdir(busy);
        await Deno.writeTextFile(`${busy}/keep.txt`, "mine");
        const r = await runBackup(["restore", "--input", full, "--data-dir", busy]);
        assertEquals(r.code, 3, r.stderr);
        assertStringIncludes(r.stderr, "is not empty");
        assertEquals([...Deno.readDirSync(busy)].map((e) => e.name), ["keep.txt"]);
      });

      await t.step("a flipped byte fails verify and restore, naming the entry", async () => {
        const reader = await ArchiveReader.open(full);
        const scan = await reader.scan({ hash: false });
        reader.close();
        const blob = scan.entries.find((e) => e.name === `blobs/${sha256Hex(files.virtualbox)}`)!;
        const bytes = await Deno.readFile(full);
        bytes[blob.offset + 1000]! ^= 0x01;
        const damaged = `${work}/damaged.wbak`;
        await Deno.writeFile(damaged, bytes);
        const v = await runBackup(["verify", "--input", damaged]);
        assertEquals(v.code, 1);
        assertStringIncludes(v.stderr, `${blob.name} is corrupt`);
        assertStringIncludes(v.stdout, "DAMAGED");
        const target = `${work}/from-damaged`;
        const r = await runBackup(["restore", "--input", damaged, "--data-dir", target]);
        assertEquals(r.code, 1);
        assertStringIncludes(r.stderr, `${blob.name} is corrupt`);
        assert(!await exists(target), "nothing restored from a damaged archive");
        // A flipped byte in the manifest is named too.
        const manifest = scan.entries.at(-1)!;
        const flipped = await Deno.readFile(full);
        flipped[manifest.offset + 5]! ^= 0x01;
        await Deno.writeFile(damaged, flipped);
        const m = await runBackup(["verify", "--input", damaged]);
        assertEquals(m.code, 1);
        assertStringIncludes(m.stderr, "manifest.json is corrupt");
        // A truncated archive (a copy cut short) is named as such.
        await Deno.writeFile(damaged, (await Deno.readFile(full)).subarray(0, blob.offset + 10));
        const cut = await runBackup(["verify", "--input", damaged]);
        assertEquals(cut.code, 1);
        assertStringIncludes(cut.stderr, `${blob.name} is truncated`);
      });

      await t.step(
        "a blob entry rewritten with consistent checksums fails verify and restore naming it, leaving nothing",
        async () => {
          // What a tamperer does: other bytes under the blob's name, its header's and the manifest's sha256
          // rewritten to match them, and the manifest's own header to match the new manifest.
          const name = sha256Hex(files.virtualbox);
          const tampered = await rewriteBlobEntry(full, `blobs/${name}`);
          const v = await runBackup(["verify", "--input", tampered]);
          assertEquals(v.code, 1, `verify compares a blob with its name: ${v.stdout} ${v.stderr}`);
          assertStringIncludes(v.stderr, `blobs/${name} holds other bytes`);
          const target = `${work}/from-tampered`;
          const r = await runBackup(["restore", "--input", tampered, "--data-dir", target]);
          assertEquals(r.code, 1, `restore of the rewritten blob: ${r.stdout} ${r.stderr}`);
          assertStringIncludes(r.stderr, `blobs/${name} holds other bytes`);
          assert(!await exists(target), "nothing restored");
          assert(!await exists(`${target}.restoring`), "no half-restored directory is left behind");
        },
      );

      await t.step(
        "an incremental backup holds only blobs its base lacks, and restores with it",
        async () => {
          const extra = content(3, 200_000);
          await uploadProvider(api, alice, "vmware_desktop", extra);
          const incremental = `${work}/incremental.wbak`;
          const made = await runBackup([
            "create",
            "--data-dir",
            source,
            "--output",
            incremental,
            "--incremental-from",
            full,
          ]);
          assertEquals(made.code, 0, made.stderr);
          assertStringIncludes(made.stdout, " 1 blobs ");
          assertStringIncludes(made.stdout, "2 blobs left in its base");
          assertStringIncludes(made.stdout, "root key NOT included");
          const size = (await Deno.stat(incremental)).size;
          assert(
            size < (await Deno.stat(full)).size - (6 << 20),
            `the incremental (${size} bytes) skips the big blob`,
          );
          const target = `${work}/restored-incremental`;
          const r = await runBackup(["restore", "--input", incremental, "--data-dir", target]);
          assertEquals(r.code, 0, r.stderr);
          await Deno.copyFile(`${work}/restored/root.key`, `${target}/root.key`);
          const back = restored = await spawnServer(target, serverEnv);
          for (const [name, bytes] of Object.entries({ ...files, vmware_desktop: extra })) {
            assertEquals(await downloadSha(back.url, alice, name), sha256Hex(bytes), name);
          }
          restored.kill();
          await restored.status;
          restored = undefined;
          // Without its base it is refused, naming the base.
          await Deno.rename(full, `${work}/moved.wbak`);
          const alone = await runBackup(["restore", "--input", incremental, "--data-dir", `${work}/no-base`]);
          assertEquals(alone.code, 1);
          assertStringIncludes(alone.stderr, "its base full.wbak");
          const withBase = await runBackup([
            "verify",
            "--input",
            incremental,
            "--base",
            `${work}/moved.wbak`,
          ]);
          assertEquals(withBase.code, 0, withBase.stderr);
        },
      );

      await t.step(
        "a referenced blob the store lost: the archive is written and the exit code says so",
        async () => {
          const lost = sha256Hex(files.virtualbox);
          await Deno.remove(`${source}/blobs/${lost.slice(0, 2)}/${lost}`);
          const output = `${work}/incomplete.wbak`;
          const made = await runBackup(["create", "--data-dir", source, "--output", output]);
          assertEquals(made.code, 3, made.stderr);
          assertStringIncludes(made.stdout, "INCOMPLETE: 1 referenced blobs are missing from the store");
          const v = await runBackup(["verify", "--input", output]);
          assertEquals(v.code, 0, v.stderr);
        },
      );
      assert(ackedBefore.length > 0);
      await live.close();
      await reading;
    } finally {
      restored?.kill("SIGKILL");
      await restored?.status;
      server?.kill();
      await server?.status;
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});

/** A copy of `archive` whose entry `entryName` holds other bytes, with every checksum rewritten to agree. */
async function rewriteBlobEntry(archive: string, entryName: string): Promise<string> {
  const reader = await ArchiveReader.open(archive);
  const scan = await reader.scan({ hash: false });
  reader.close();
  const blob = scan.entries.find((e) => e.name === entryName)!;
  const manifest = scan.entries.at(-1)!;
  const bytes = await Deno.readFile(archive);
  const encoder = new TextEncoder();
  // Every sha256 is 64 hex characters: rewriting one moves no offset.
  const replaceIn = (from: number, to: number, before: string, after: string) => {
    const at = new TextDecoder().decode(bytes.subarray(from, to)).indexOf(before);
    assert(at >= 0, `${before} in bytes ${from}-${to}`);
    bytes.set(encoder.encode(after), from + at);
  };
  const headerStart = (entry: { offset: number }) => bytes.lastIndexOf(10, entry.offset - 2) + 1;
  bytes[blob.offset + 1000]! ^= 0x01;
  const forged = sha256Hex(bytes.subarray(blob.offset, blob.offset + blob.size));
  replaceIn(headerStart(blob), blob.offset, `"sha256":"${blob.sha256}"`, `"sha256":"${forged}"`);
  const listed = JSON.parse(
    new TextDecoder().decode(bytes.subarray(manifest.offset, manifest.offset + manifest.size)),
  );
  for (const e of listed.entries) if (e.name === entryName) e.sha256 = forged;
  const rewritten = encoder.encode(JSON.stringify(listed, null, 1));
  assertEquals(rewritten.length, manifest.size, "the manifest rewritten to the same length");
  bytes.set(rewritten, manifest.offset);
  replaceIn(headerStart(manifest), manifest.offset, manifest.sha256, sha256Hex(rewritten));
  const out = archive.replace(/\.wbak$/, "-tampered.wbak");
  await Deno.writeFile(out, bytes);
  return out;
}

async function waitFor(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("not within the time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("every log line a backup keeps is checked: a sealed segment's cut or garbled line fails the backup, the last segment's torn tail is left out", async () => {
  // Three segments of three batches; the checkpoint covers every whole line, so no line is replayed.
  const dir = await Deno.makeTempDir({ prefix: "wharf-backup-lines-" });
  try {
    const line = (index: number) => `{"Index":${index},"Events":[{"Topic":"Node","Key":"n${index}"}]}\n`;
    const segment = (first: number, lines: string) =>
      Deno.writeTextFile(`${dir}/events/${String(first).padStart(20, "0")}.ndjson`, lines);
    await Deno.mkdir(`${dir}/events`, { recursive: true });
    await Deno.writeTextFile(`${dir}/manifest.json`, JSON.stringify({ checkpointIndex: 8 }));
    await segment(4, line(4) + line(5) + line(6));
    // The last segment: its third line is torn (a crash mid-write), as the log's recovery would find it.
    await segment(7, line(7) + line(8) + line(9).slice(0, 20) + "\n");

    // A sealed segment's line cut short (its index whole, its record not): the backup names it and fails.
    await segment(1, line(1) + line(2).slice(0, 25) + "\n" + line(3));
    const damaged = await runBackup(["create", "--data-dir", dir, "--output", `${dir}/damaged.wbak`]);
    assertEquals(damaged.code, 1, damaged.stderr);
    assertStringIncludes(damaged.stderr, "log segment 00000000000000000001.ndjson is damaged at index 2");
    assert(!await exists(`${dir}/damaged.wbak`));
    // A sealed line whose index and closing brace are whole but whose record is not JSON fails it too: a backup
    // parses every line it keeps (the stream endpoint parses old lines when it replays them).
    await segment(1, line(1) + line(2).replace('"Topic"', '"Topic" "') + line(3));
    const garbled = await runBackup(["create", "--data-dir", dir, "--output", `${dir}/garbled.wbak`]);
    assertEquals(garbled.code, 1, garbled.stderr);
    assertStringIncludes(garbled.stderr, "log segment 00000000000000000001.ndjson is damaged at index 2");
    assert(!await exists(`${dir}/garbled.wbak`));

    // Whole again: the backup holds batches 1-8, without the torn line.
    await segment(1, line(1) + line(2) + line(3));
    const made = await runBackup(["create", "--data-dir", dir, "--output", `${dir}/whole.wbak`]);
    assertEquals(made.code, 0, made.stderr);
    assertEquals(snapshotIndex(made.stdout), 8);
    assertStringIncludes(made.stdout, "(events 1-8, 8 batches)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a backup takes each document's state as the server loads it: packs' highest index per id, their deletions, the files from before a collection was packed, a base's obsolete files, then the log after the checkpoint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-backup-packs-" });
  try {
    const stored = (id: string, index: number) => ({ id, version: index, index, doc: { id, at: index } });
    const write = (path: string, lines: unknown[]) =>
      Deno.writeTextFile(`${dir}/${path}`, lines.map((l) => JSON.stringify(l) + "\n").join(""));
    await Deno.mkdir(`${dir}/events`, { recursive: true });
    await Deno.mkdir(`${dir}/test/packed`, { recursive: true });
    await Deno.mkdir(`${dir}/test/items`, { recursive: true });
    await Deno.writeTextFile(`${dir}/manifest.json`, JSON.stringify({ checkpointIndex: 10 }));
    // test/packed: files left from before it was packed, and two deltas (no base).
    await write("test/packed/a.json", [stored("a", 3)]); // a delta's newer state wins
    await write("test/packed/b.json", [stored("b", 6)]); // newer than the delta's: the file wins
    await write("test/packed/c.json", [stored("c", 2)]); // deleted by a delta
    await write("test/packed/delta-0000000000000007.ndjson", [
      stored("a", 5),
      stored("b", 4),
      { id: "c", index: 7, deleted: true },
      stored("d", 7),
      stored("x", 6),
    ]);
    await write("test/packed/delta-0000000000000010.ndjson", [stored("d", 9), stored("e", 10), {
      id: "x",
      index: 10,
      deleted: true,
    }]);
    // test/items: a base makes the older delta and the files obsolete.
    await write("test/items/i.json", [stored("i", 3)]);
    await write("test/items/delta-0000000000000005.ndjson", [stored("h", 5)]);
    await write("test/items/base-0000000000000008.ndjson", [stored("g", 8)]);
    // The log: 1-12; after the checkpoint, 11 deletes e and 12 writes f and g.
    const doc = (c: string, id: string, v: number, d: unknown) => ({ c, id, v, d });
    const docs: Record<number, unknown[]> = {
      11: [doc("test/packed", "e", 11, null)],
      12: [doc("test/packed", "f", 12, { id: "f", at: 12 }), doc("test/items", "g", 12, { id: "g", at: 12 })],
    };
    const line = (index: number) =>
      JSON.stringify({ Index: index, Events: [], ...(docs[index] ? { Docs: docs[index] } : {}) }) + "\n";
    await Deno.writeTextFile(
      `${dir}/events/${String(1).padStart(20, "0")}.ndjson`,
      Array.from({ length: 12 }, (_, i) => line(i + 1)).join(""),
    );

    const made = await runBackup(["create", "--data-dir", dir, "--output", `${dir}/packs.wbak`]);
    assertEquals(made.code, 0, made.stderr);
    assertStringIncludes(made.stdout, "snapshot at index 12");
    const reader = await ArchiveReader.open(`${dir}/packs.wbak`);
    const found: Record<string, Record<string, number>> = {};
    try {
      for (const entry of (await reader.scan({ hash: false })).entries) {
        if (!entry.name.startsWith("documents/")) continue;
        const collection = entry.name.split("/").slice(1, 3).join("/");
        for (const text of new TextDecoder().decode(await reader.bytes(entry)).split("\n").filter((l) => l)) {
          const d = JSON.parse(text);
          assertEquals(found[collection]?.[d.id], undefined, `${collection}/${d.id} is in the archive once`);
          found[collection] = { ...found[collection], [d.id]: d.index };
          assertEquals(d.doc, { id: d.id, at: d.index }, `${collection}/${d.id}`);
        }
      }
    } finally {
      reader.close();
    }
    assertEquals(found, { "test/items": { g: 12 }, "test/packed": { a: 5, b: 6, d: 9, f: 12 } });
    assertEquals(made.stdout.match(/(\d+) documents/)?.[1], "5");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a backup's documents entry closes once its UTF-8 bytes reach 8 MiB, whatever the characters", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-backup-bytes-" });
  try {
    await Deno.mkdir(`${dir}/events`, { recursive: true });
    await Deno.mkdir(`${dir}/test/wide`, { recursive: true });
    await Deno.writeTextFile(`${dir}/manifest.json`, JSON.stringify({ checkpointIndex: 6 }));
    // Six documents of 700,000 three-byte characters: 2.1 MB each in UTF-8, 0.7 M characters.
    const text = "倉".repeat(700_000);
    for (let i = 1; i <= 6; i++) {
      const stored = { id: `d${i}`, version: i, index: i, doc: { text } };
      await Deno.writeTextFile(`${dir}/test/wide/d${i}.json`, JSON.stringify(stored) + "\n");
    }
    await Deno.writeTextFile(
      `${dir}/events/${String(1).padStart(20, "0")}.ndjson`,
      Array.from({ length: 6 }, (_, i) => JSON.stringify({ Index: i + 1, Events: [] }) + "\n").join(""),
    );
    const made = await runBackup(["create", "--data-dir", dir, "--output", `${dir}/wide.wbak`]);
    assertEquals(made.code, 0, made.stderr);
    const reader = await ArchiveReader.open(`${dir}/wide.wbak`);
    try {
      const entries = (await reader.scan({ hash: false })).entries.filter((e) =>
        e.name.startsWith("documents/")
      );
      const sizes: number[] = [];
      for (const entry of entries) {
        const lines = new TextDecoder().decode(await reader.bytes(entry)).split("\n").filter((l) => l);
        const last = new TextEncoder().encode(lines.at(-1)! + "\n").length;
        // At most 8 MiB before its last line (counted in characters, one entry held all 12.6 MB).
        assert(entry.size - last < 8 << 20, `${entry.name}: ${entry.size} bytes`);
        sizes.push(lines.length);
      }
      assertEquals(sizes, [4, 2]);
    } finally {
      reader.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
