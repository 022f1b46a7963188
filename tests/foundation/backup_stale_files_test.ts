// `main.ts backup create` writes `<output>.partial` and `<output>.spool` only as new files: one that already exists
// (or a symlink by that name) keeps its owner and mode, so a holder of it could read the documents. Create refuses,
// naming the file and how to proceed, and leaves it (and a symlink's target) as it was (the old code truncated and
// wrote through both: a symlinked spool's target was left holding the backup's documents).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { plainManifest, writeCraftedArchive } from "./backup_crafted.ts";
import { runBackup } from "./backup_helpers.ts";

const encoder = new TextEncoder();
const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

Deno.test("backup create refuses an existing .spool (or a symlink by its name) and .partial", async (t) => {
  const work = await Deno.makeTempDir({ prefix: "wharf-stale-files-" });
  try {
    // A data directory holding one document (checkpointed: create spools it).
    const line = '{"id":"secret-box","version":1,"index":1,"doc":{"name":"secret-box"}}\n';
    await writeCraftedArchive(
      `${work}/seed.wbak`,
      [{ name: "documents/test/items/000000.ndjson", chunks: [encoder.encode(line)] }],
      (records) => plainManifest(records, 1),
    );
    const source = `${work}/source`;
    const seeded = await runBackup(["restore", "--input", `${work}/seed.wbak`, "--data-dir", source]);
    assertEquals(seeded.code, 0, seeded.stderr);

    const cases: Array<[string, string]> = [["a symlink by the spool's name", ".spool"], [
      "a stale .partial",
      ".partial",
    ]];
    for (const [kind, suffix] of cases) {
      await t.step(kind, async () => {
        const output = `${work}/out${suffix}.wbak`;
        const target = `${work}/target${suffix}`;
        await Deno.writeTextFile(target, "mine", { mode: 0o644 });
        if (suffix === ".spool") await Deno.symlink(target, `${output}${suffix}`);
        else await Deno.copyFile(target, `${output}${suffix}`);
        const held = suffix === ".spool" ? target : `${output}${suffix}`;
        const r = await runBackup(["create", "--data-dir", source, "--output", output]);
        assertEquals(r.code, 1, r.stderr);
        assertStringIncludes(
          r.stderr,
          `${output}${suffix} already exists (left by a backup that was stopped, or not made by wharf): nothing ` +
            `was written to it; check it is not in use, remove it and run the backup again`,
        );
        assertEquals(await Deno.readTextFile(held), "mine");
        assert(await exists(`${output}${suffix}`), "the existing file was removed");
        assert(!await exists(output), "an archive was written");
        if (suffix === ".spool") assert(!await exists(`${output}.partial`), "the partial file was left");
        // Once removed, the backup runs.
        await Deno.remove(`${output}${suffix}`);
        const again = await runBackup(["create", "--data-dir", source, "--output", output]);
        assertEquals(again.code, 0, again.stderr);
      });
    }
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});
