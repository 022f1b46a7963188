// An archive whose documents lines agree with their checksums but are not stored documents (docs/operations.md#the-
// archive) is a damaged archive: `main.ts backup verify` says DAMAGED and `restore` writes nothing, exit 1, naming
// the entry and line (the old code called them intact; restore failed on `null` with a raw TypeError and restored
// the other, on which the server then would not start: "box.versions is not iterable").

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { plainManifest, writeCraftedArchive } from "./backup_crafted.ts";
import { runBackup } from "./backup_helpers.ts";

const encoder = new TextEncoder();
const entry = "documents/registry/boxes/000000.ndjson";

/** Each documents line and the problem verify and restore must report. */
const cases: Array<{ line: string; problem: string }> = [
  { line: "null", problem: "it is null, not a document" },
  {
    line: '{"id":"x","version":"one","index":"two","doc":5}',
    problem: "its version is not a whole number of at least 1",
  },
  { line: '{"id":"","version":1,"index":1,"doc":{}}', problem: "its id is not one the store can hold" },
  {
    line: '{"id":"x","version":0,"index":1,"doc":{}}',
    problem: "its version is not a whole number of at least 1",
  },
  {
    line: '{"id":"x","version":1,"index":-1,"doc":{}}',
    problem: "its index is not a whole number of at least 0",
  },
  { line: '{"id":"x","version":1,"index":1,"doc":5}', problem: "its doc is not an object" },
];

async function craft(path: string, lines: string[]): Promise<void> {
  await writeCraftedArchive(
    path,
    [{ name: entry, chunks: [encoder.encode(lines.map((l) => l + "\n").join(""))] }],
    (records) => plainManifest(records, lines.length),
  );
}

Deno.test("verify and restore report a documents line that is not a stored document as damage", async (t) => {
  const work = await Deno.makeTempDir({ prefix: "wharf-document-lines-" });
  const good = '{"id":"good","version":1,"index":1,"doc":{"name":"good"}}';
  try {
    for (const [i, { line, problem }] of cases.entries()) {
      await t.step(`a line of ${line}`, async () => {
        const archive = `${work}/case-${i}.wbak`;
        // The damaged line second: the problem names its line.
        await craft(archive, [good, line]);
        const verified = await runBackup(["verify", "--input", archive]);
        assertEquals(verified.code, 1, verified.stderr);
        assertStringIncludes(verified.stderr, `${archive}: ${entry} line 2 is damaged: ${problem}`);
        assertEquals(verified.stdout.trim(), `backup ${archive}: DAMAGED (1 problems)`);
        const target = `${work}/restored-${i}`;
        const restored = await runBackup(["restore", "--input", archive, "--data-dir", target]);
        assertEquals(restored.code, 1, restored.stderr);
        assertStringIncludes(restored.stderr, `${archive}: ${entry} line 2 is damaged: ${problem}`);
        assertStringIncludes(restored.stderr, `${archive} is damaged: nothing was restored`);
        assert(!restored.stderr.includes("TypeError"), restored.stderr);
        assert(!await Deno.stat(target).then(() => true, () => false), "the target was created");
      });
    }
    await t.step("well-formed lines are intact and restored", async () => {
      const archive = `${work}/good.wbak`;
      await craft(archive, [good]);
      const verified = await runBackup(["verify", "--input", archive]);
      assertEquals(verified.code, 0, verified.stderr);
      const restored = await runBackup([
        "restore",
        "--input",
        archive,
        "--data-dir",
        `${work}/restored-good`,
      ]);
      assertEquals(restored.code, 0, restored.stderr);
    });
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});
