// A restore into a data directory holds a batch of documents, not the archive (docs/operations.md#restore): the
// `main.ts backup restore` child's peak resident memory (VmHWM, from /proc) restoring ~190 MB of documents written
// through a started server's API stays far below what holding them all costs, and the restored server answers
// every one of them.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { runBackup, runBackupMeasured } from "./backup_helpers.ts";

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

Deno.test({
  name: "a data-directory restore of ~190 MB of documents keeps its resident memory bounded by a batch",
  ignore: Deno.build.os !== "linux",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const work = await Deno.makeTempDir({ prefix: "wharf-restore-mem-" });
    let server: ChildServer | undefined;
    try {
      const source = `${work}/source`;
      const backUp = async (name: string) => {
        const made = await runBackup(["create", "--data-dir", source, "--output", `${work}/${name}.wbak`]);
        assertEquals(made.code, 0, made.stderr);
      };
      const restoreMeasured = async (name: string) => {
        const args = ["restore", "--input", `${work}/${name}.wbak`, "--data-dir", `${work}/${name}`];
        const run = await runBackupMeasured(args);
        assertEquals(run.code, 0, run.stderr);
        return { peakKib: run.peakKib, documents: Number(/ (\d+) documents/.exec(run.stdout)![1]) };
      };
      server = await spawnServer(source, { WHARF_TEST_ROUTES: "1" });
      // The same directory before the documents: its restore is what the command costs without them.
      await backUp("small");
      const url = server.url;
      await eachConcurrently(documents(), 16, async ({ kind, id, n }) => {
        const r = await fetch(`${url}/v1/_test/${kind}/${id}`, {
          method: "PUT",
          body: JSON.stringify(body(kind, n)),
        });
        assertEquals(r.status, 200, `${kind}/${id}: ${await r.text()}`);
      });
      await backUp("full");
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
      assert(growthMib < 580, `peak RSS grew by ${growthMib.toFixed(0)} MiB`);
    } finally {
      server?.kill();
      await server?.status;
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});
