// An archive whose documents entry agrees with its own checksums but is bigger than `backup create` ever writes
// (docs/operations.md#entry-size-caps): `main.ts backup restore` and `verify` refuse it from its header (or its
// line count), naming the entry and the cap, with exit 1, small and fast, and the target is never created. The
// restore runs with a 256 MiB V8 heap, where reading the entry whole ran out of memory.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { runBackupMeasured } from "./backup_helpers.ts";

const encoder = new TextEncoder();
const entryName = "documents/test/items/000001.ndjson";
/** A payload chunk of 349,525 empty documents ("{}\n"), ~1 MiB, repeated to make the entry. */
const chunk = encoder.encode("{}\n".repeat(349_525));
const heapFlags = ["--v8-flags=--max-old-space-size=256"];

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
}

/**
 * Writes an archive of one documents entry of `chunks` chunks and its manifest, every size and sha256 consistent
 * (the format of docs/operations.md#the-archive, written here by hand so no cap of wharf's shapes it).
 */
async function writeCraftedArchive(path: string, chunks: number): Promise<number> {
  const hash = createHash("sha256");
  for (let i = 0; i < chunks; i++) hash.update(chunk);
  const record = { name: entryName, size: chunk.length * chunks, sha256: hash.digest("hex") };
  const header = (r: typeof record) =>
    encoder.encode(JSON.stringify({ entry: r.name, size: r.size, sha256: r.sha256 }) + "\n");
  const manifest = encoder.encode(JSON.stringify({
    format: "wharf-backup",
    version: 1,
    snapshot_index: 1,
    first_index: 2,
    batches: 0,
    documents: chunks * 349_525,
    blobs: 0,
    root_key: false,
    missing_blobs: [],
    base: null,
    entries: [record],
  }));
  const manifestRecord = {
    name: "manifest.json",
    size: manifest.length,
    sha256: createHash("sha256").update(manifest).digest("hex"),
  };
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  try {
    await writeAll(file, encoder.encode("WHARF-BACKUP 1\n"));
    await writeAll(file, header(record));
    for (let i = 0; i < chunks; i++) await writeAll(file, chunk);
    await writeAll(file, encoder.encode("\n"));
    await writeAll(file, header(manifestRecord));
    await writeAll(file, manifest);
    await writeAll(file, encoder.encode("\nWHARF-BACKUP-END\n"));
  } finally {
    file.close();
  }
  return record.size;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test({
  name: "restore and verify refuse a self-consistent documents entry over its cap without reading it whole",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    const work = await Deno.makeTempDir({ prefix: "wharf-entry-cap-" });
    try {
      /** Restores `archive` under a 256 MiB heap: exit 1 naming the entry, small, quick, nothing created. */
      const refusedRestore = async (archive: string, expected: string[]) => {
        const target = `${work}/restored`;
        const started = performance.now();
        const run = await runBackupMeasured(["restore", "--input", archive, "--data-dir", target], heapFlags);
        const seconds = (performance.now() - started) / 1000;
        console.log(
          `restore of ${archive.slice(work.length + 1)}: exit ${run.code} after ${seconds.toFixed(1)} s, ` +
            `peak RSS ${Math.round(run.peakKib / 1024)} MiB; ${run.stderr.trim().split("\n").at(-1)}`,
        );
        assertEquals(run.code, 1, run.stderr);
        for (const text of [entryName, ...expected, "nothing was restored"]) {
          assertStringIncludes(run.stderr, text);
        }
        // The process's own ~90 MiB, not the entry (reading it whole ran out of a 256 MiB heap).
        assert(run.peakKib < 200 * 1024, `peak RSS ${run.peakKib} KiB`);
        assert(seconds < 10, `took ${seconds} s`);
        assert(!await exists(target), "the target was created");
        assert(!await exists(`${target}.restoring`), "a staging folder was left");
      };
      const refusedVerify = async (archive: string, expected: string[]) => {
        const run = await runBackupMeasured(["verify", "--input", archive], heapFlags);
        assertEquals(run.code, 1, run.stderr);
        for (const text of [entryName, ...expected]) assertStringIncludes(run.stderr, text);
        assertStringIncludes(run.stdout, "DAMAGED");
      };

      await t.step("an entry of 96 MiB is refused from its header size", async () => {
        const archive = `${work}/oversized.wbak`;
        const size = await writeCraftedArchive(archive, 96);
        const expected = [`is ${size} bytes`, "over the 64 MiB", "(67108864 bytes)", "--max-entry-bytes"];
        await refusedRestore(archive, expected);
        await refusedVerify(archive, expected);
        // Raised past its size, the cap lets verify hash the entry (streamed), which then fails on its lines.
        const raised = await runBackupMeasured(
          ["verify", "--input", archive, "--max-entry-bytes", String(128 << 20)],
          heapFlags,
        );
        assertEquals(raised.code, 1, raised.stderr);
        assertStringIncludes(raised.stderr, `${entryName} holds more than 10000 lines`);
        assert(!raised.stderr.includes("over the"), raised.stderr);
        const lowered = await runBackupMeasured(["verify", "--input", archive, "--max-entry-bytes", "1024"]);
        assertEquals(lowered.code, 2, lowered.stderr);
        assertStringIncludes(
          lowered.stderr,
          "--max-entry-bytes must be a number of bytes of at least 67108864",
        );
      });

      await t.step("an entry under the cap with more lines than a backup writes is refused", async () => {
        const archive = `${work}/many-lines.wbak`;
        await writeCraftedArchive(archive, 32);
        const expected = ["holds more than 10000 lines"];
        await refusedRestore(archive, expected);
        await refusedVerify(archive, expected);
      });
    } finally {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});
