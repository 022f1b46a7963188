// `backup create` and a restore into a data directory hold a batch of documents, not the snapshot
// (docs/operations.md#backups): the `main.ts backup create` and `restore` children's peak resident memory (VmHWM,
// from /proc) backing up and restoring ~190 MB of documents written through a started server's API stays far below
// what holding them all costs, and the restored server answers every one of them.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { runBackupMeasured } from "./backup_helpers.ts";

const packed = 3_000;
const items = 1_000;
const padBytes = 48_000;

/** The test document `kind`/`n` as written and as the restored server must answer it. */
function body(kind: string, n: number): Record<string, unknown> {
  return { kind, n, pad: String.fromCharCode(97 + n % 26).repeat(padBytes) };
}

function documents(): { kind: "items" | "packed"; id: string; n: number }[] {
  return [
    ...Array.from({ length: items }, (_, n) => ({ kind: "items" as const, id: `item-${n}`, n })),
    ...Array.from({ length: packed }, (_, n) => ({ kind: "packed" as const, id: `packed-${n}`, n })),
  ];
}

/** Runs `work` over `list` with `concurrency` of them in flight. */
async function eachConcurrently<T>(list: T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < list.length) await work(list[next++]!);
  }));
}

/** Waits until `dir`'s checkpoint (manifest.json) reflects log index `index`. */
async function checkpointed(dir: string, index: number): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    const manifest = await Deno.readTextFile(`${dir}/manifest.json`).then(JSON.parse, () => ({}));
    if (Number(manifest.checkpointIndex) >= index) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${dir} was not checkpointed up to ${index} within 30 s`);
}

Deno.test({
  name:
    "a backup and a data-directory restore of ~190 MB of documents keep their resident memory bounded by a batch",
  ignore: Deno.build.os !== "linux",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const work = await Deno.makeTempDir({ prefix: "wharf-restore-mem-" });
    let server: ChildServer | undefined;
    try {
      const source = `${work}/source`;
      const backUp = async (name: string) => {
        const started = performance.now();
        const made = await runBackupMeasured([
          "create",
          "--data-dir",
          source,
          "--output",
          `${work}/${name}.wbak`,
        ]);
        assertEquals(made.code, 0, made.stderr);
        return { peakKib: made.peakKib, seconds: (performance.now() - started) / 1000 };
      };
      const restoreMeasured = async (name: string) => {
        const args = ["restore", "--input", `${work}/${name}.wbak`, "--data-dir", `${work}/${name}`];
        const run = await runBackupMeasured(args);
        assertEquals(run.code, 0, run.stderr);
        return { peakKib: run.peakKib, documents: Number(/ (\d+) documents/.exec(run.stdout)![1]) };
      };
      server = await spawnServer(source, { WHARF_TEST_ROUTES: "1" });
      // The same directory before the documents: its backup and restore are what the commands cost without them.
      const createBaseline = await backUp("small");
      const url = server.url;
      let lastIndex = 0;
      await eachConcurrently(documents(), 16, async ({ kind, id, n }) => {
        const r = await fetch(`${url}/v1/_test/${kind}/${id}`, {
          method: "PUT",
          body: JSON.stringify(body(kind, n)),
        });
        const text = await r.text();
        assertEquals(r.status, 200, `${kind}/${id}: ${text}`);
        lastIndex = Math.max(lastIndex, JSON.parse(text).index);
      });
      // Backed up once the server checkpointed them (WHARF_CHECKPOINT_INTERVAL, 1 s): what a backup holds then
      // is the checkpoint's documents, not those the log wrote since.
      await checkpointed(source, lastIndex);
      const create = await backUp("full");
      const createGrowthMib = (create.peakKib - createBaseline.peakKib) / 1024;
      console.log(
        `create of ${packed + items} documents of ${padBytes} bytes: peak RSS ${
          Math.round(create.peakKib / 1024)
        } MiB, ${Math.round(createBaseline.peakKib / 1024)} MiB without them, ${create.seconds.toFixed(1)} s`,
      );
      server.kill();
      await server.status;
      server = undefined;

      const baseline = await restoreMeasured("small");
      const restore = await restoreMeasured("full");
      assertEquals(restore.documents, baseline.documents + packed + items);
      const growthMib = (restore.peakKib - baseline.peakKib) / 1024;
      console.log(
        `restore of ${packed + items} documents of ${padBytes} bytes: peak RSS ${
          Math.round(restore.peakKib / 1024)
        } MiB, ${Math.round(baseline.peakKib / 1024)} MiB without them`,
      );

      server = await spawnServer(`${work}/full`, { WHARF_TEST_ROUTES: "1" });
      const restored = server.url;
      await eachConcurrently(documents(), 16, async ({ kind, id, n }) => {
        const r = await fetch(`${restored}/v1/_test/${kind}/${id}`);
        assertEquals(r.status, 200, `${kind}/${id} restored`);
        assertEquals((await r.json()).doc, body(kind, n), `${kind}/${id}`);
      });
      // Holding every document grew the old restore's peak by 766-822 MiB (ee5d0df); streaming them a batch (one
      // archive entry, at most 8 MiB) at a time grows it by 240-385 MiB, most of it garbage V8 collects late.
      assert(growthMib < 580, `restore: peak RSS grew by ${growthMib.toFixed(0)} MiB`);
      // Holding every document grew the old create's peak by 879-961 MiB (9897773); streaming them through its
      // spool file and into the archive an entry at a time grows it by ~160 MiB, most of it garbage V8 collects late
      // (it completes under a 64 MiB V8 heap, where the old one ran out of memory at 96 MiB).
      assert(createGrowthMib < 450, `create: peak RSS grew by ${createGrowthMib.toFixed(0)} MiB`);
    } finally {
      server?.kill();
      await server?.status;
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});
