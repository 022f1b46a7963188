// An archive whose documents entry agrees with its own checksums but is bigger than `backup create` ever writes
// (docs/operations.md#entry-size-caps): `main.ts backup restore` and `verify` refuse it from its header (or its
// line count), naming the entry and the cap, with exit 1, small and fast, and the target is never created. The
// restore runs with a 256 MiB V8 heap, where reading the entry whole ran out of memory.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { denseDocuments, plainManifest, writeCraftedArchive } from "./backup_crafted.ts";
import { runBackupMeasured } from "./backup_helpers.ts";

const encoder = new TextEncoder();
const entryName = "documents/test/items/000001.ndjson";
/** A payload chunk of 349,525 empty documents ("{}\n"), ~1 MiB, repeated to make the entry. */
const chunk = encoder.encode("{}\n".repeat(349_525));
const heapFlags = ["--v8-flags=--max-old-space-size=256"];

/** Writes an archive of one documents entry of `chunks` chunks; returns its size. */
async function writeLinesArchive(path: string, chunks: number): Promise<number> {
  const entries = [{ name: entryName, chunks: Array.from({ length: chunks }, () => chunk) }];
  const [record] = await writeCraftedArchive(path, entries, (r) => plainManifest(r, chunks * 349_525));
  return record!.size;
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
        const size = await writeLinesArchive(archive, 96);
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
        // Past V8's longest string restore could not read an entry the cap let through: refused as wrong usage
        // (the old code took it, and verify passed what restore then failed on: "buffer exceeds maximum length").
        const unreadable = await runBackupMeasured([
          "verify",
          "--input",
          archive,
          "--max-entry-bytes",
          String(2 ** 29),
        ]);
        assertEquals(unreadable.code, 2, unreadable.stderr);
        assertStringIncludes(unreadable.stderr, "at most 536870888");
        assertStringIncludes(unreadable.stderr, "the longest entry restore can read");
      });

      await t.step(
        "a documents line under the byte cap that parses into 21 million objects is refused",
        async () => {
          // One line "[{},{},…]" of 62.9 MB (under the 64 MiB cap, one line): parsed, ~2.2 GB (the old code ran
          // out of the 256 MiB heap, exit 133, leaving the staging folder behind).
          const archive = `${work}/dense-line.wbak`;
          const objects = encoder.encode("{},".repeat(349_525));
          const chunks = [
            encoder.encode("["),
            ...Array.from({ length: 60 }, () => objects),
            encoder.encode("{}]\n"),
          ];
          await writeCraftedArchive(archive, [{ name: entryName, chunks }], (r) => plainManifest(r, 1));
          const expected = ["line 1 holds 41943002 JSON values", "over the 1048576 one line may hold"];
          await refusedRestore(archive, expected);
          await refusedVerify(archive, expected);
        },
      );

      await t.step("an entry of 12 lines each at the value cap restores under the 256 MiB heap", async () => {
        // Parsed whole, as the old code parsed a documents entry, its 12 lines are ~600 MB (exit 133); a batch at a
        // time, one line's cap.
        const archive = `${work}/dense-lines.wbak`;
        const entries = [denseDocuments(entryName, 12)];
        await writeCraftedArchive(archive, entries, (r) => plainManifest(r, 12));
        const target = `${work}/dense-restored`;
        const run = await runBackupMeasured(["restore", "--input", archive, "--data-dir", target], heapFlags);
        console.log(
          `restore of dense-lines.wbak: exit ${run.code}, peak RSS ${Math.round(run.peakKib / 1024)} MiB`,
        );
        assertEquals(run.code, 0, run.stderr);
        assertStringIncludes(run.stdout, " 12 documents");
      });

      await t.step("an entry under the cap with more lines than a backup writes is refused", async () => {
        const archive = `${work}/many-lines.wbak`;
        await writeLinesArchive(archive, 32);
        const expected = ["holds more than 10000 lines"];
        await refusedRestore(archive, expected);
        await refusedVerify(archive, expected);
      });
    } finally {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});
