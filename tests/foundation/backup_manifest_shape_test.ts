// An archive whose manifest agrees with its checksum but not with the manifest's shape (docs/operations.md#the-archive)
// is a damaged archive: `main.ts backup verify` says DAMAGED and `restore` writes nothing, exit 1, naming what is
// wrong, as for any other damage (the old code read it as it came and failed with a TypeError).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { plainManifest, writeCraftedArchive } from "./backup_crafted.ts";
import { runBackup } from "./backup_helpers.ts";

/** Each manifest (given the archive's entry records: none) and the problem verify and restore must report. */
const cases: Array<{ name: string; manifest: unknown; problem: string }> = [
  { name: "null", manifest: null, problem: "manifest.json is damaged: it is null, not an object" },
  {
    name: "an entry of null",
    manifest: { entries: [null] },
    problem: "manifest.json is damaged: its snapshot_index is not a whole number of at least 0",
  },
  {
    name: "an entry of null in an otherwise whole manifest",
    manifest: { ...plainManifest([], 0) as Record<string, unknown>, entries: [null] },
    problem: "manifest.json is damaged: its entry 0 is not a name, size and sha256",
  },
  {
    name: "a base without blobs",
    manifest: {
      ...plainManifest([], 0) as Record<string, unknown>,
      base: { file: "base.wbak", manifest_sha256: "0".repeat(64), snapshot_index: 1 },
    },
    problem: "manifest.json is damaged: its base's blobs are not a list of sha256s",
  },
];

Deno.test("verify and restore report a manifest of the wrong shape as a damaged archive", async (t) => {
  const work = await Deno.makeTempDir({ prefix: "wharf-manifest-shape-" });
  try {
    for (const [i, { name, manifest, problem }] of cases.entries()) {
      await t.step(`a manifest of ${name}`, async () => {
        const archive = `${work}/case-${i}.wbak`;
        await writeCraftedArchive(archive, [], () => manifest);
        const verified = await runBackup(["verify", "--input", archive]);
        assertEquals(verified.code, 1, verified.stderr);
        assertEquals(verified.stderr.trim(), `${archive}: ${problem}`);
        assertEquals(verified.stdout.trim(), `backup ${archive}: DAMAGED (1 problems)`);
        const target = `${work}/restored-${i}`;
        const restored = await runBackup(["restore", "--input", archive, "--data-dir", target]);
        assertEquals(restored.code, 1, restored.stderr);
        assertStringIncludes(restored.stderr, `${archive}: ${problem}\n`);
        assertStringIncludes(restored.stderr, `${archive} is damaged: nothing was restored`);
        assert(!restored.stderr.includes("TypeError"), restored.stderr);
        assert(!await Deno.stat(target).then(() => true, () => false), "the target was created");
      });
    }
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});
