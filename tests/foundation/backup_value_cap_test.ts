// A document whose line holds more JSON values than an entry's cap allows (docs/operations.md#entry-size-caps),
// written through a started server: `main.ts backup create` names the --max-entry-bytes verify and restore then
// need, verify refuses the archive without it and passes it with it, and restore with it brings the document back;
// a document past what any --max-entry-bytes allows makes create call the archive unrestorable.

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { runBackup } from "./backup_helpers.ts";

const env = { WHARF_TEST_ROUTES: "1", WHARF_MAX_BODY_BYTES: String(16 << 20) };

async function put(url: string, id: string, values: number): Promise<void> {
  const r = await fetch(`${url}/v1/_test/items/${id}`, {
    method: "PUT",
    body: JSON.stringify({ v: new Array(values).fill(0) }),
  });
  assertEquals(r.status, 200, await r.text());
}

Deno.test({
  name: "create names the --max-entry-bytes a document of many values needs, or calls it unrestorable",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const work = await Deno.makeTempDir({ prefix: "wharf-value-cap-" });
    let server: ChildServer | undefined;
    try {
      const source = `${work}/source`;
      server = await spawnServer(source, env);
      // 1.1 million numbers: 2.2 MB, under every byte cap, but its line (and its log batch, which holds it twice:
      // the write and the event) over the 1,048,576 values a line may hold by default.
      await put(server.url, "dense", 1_100_000);
      const made = await runBackup(["create", "--data-dir", source, "--output", `${work}/dense.wbak`]);
      assertEquals(made.code, 0, made.stderr);
      const needed = /give them --max-entry-bytes (\d+)/.exec(made.stdout)?.[1];
      assert(needed, made.stdout);
      assert(Number(needed) >= 1_100_000 * 64 && Number(needed) < 2 ** 29, needed);

      const refused = await runBackup(["verify", "--input", `${work}/dense.wbak`]);
      assertEquals(refused.code, 1, refused.stderr);
      assertMatch(refused.stderr, /documents\/test\/items\/\d{6}\.ndjson line \d+ holds 11\d{5} JSON values/);
      assertStringIncludes(refused.stderr, "over the 1048576 one line may hold");
      const raised = await runBackup([
        "verify",
        "--input",
        `${work}/dense.wbak`,
        "--max-entry-bytes",
        needed,
      ]);
      assertEquals(raised.code, 0, raised.stderr);
      assertStringIncludes(raised.stdout, "intact");

      // 4.3 million: its log batch holds over 8.4 million values, more than the most --max-entry-bytes allows.
      await put(server.url, "huge", 4_300_000);
      const unrestorable = await runBackup(["create", "--data-dir", source, "--output", `${work}/huge.wbak`]);
      assertEquals(unrestorable.code, 0, unrestorable.stderr);
      assertStringIncludes(unrestorable.stdout, "UNRESTORABLE: an entry needs --max-entry-bytes");
      assertStringIncludes(unrestorable.stdout, "restore refuses this archive");
      server.kill();
      await server.status;
      server = undefined;

      const target = `${work}/restored`;
      const restored = await runBackup(
        ["restore", "--input", `${work}/dense.wbak`, "--data-dir", target, "--max-entry-bytes", needed],
      );
      assertEquals(restored.code, 0, restored.stderr);
      server = await spawnServer(target, env);
      const r = await fetch(`${server.url}/v1/_test/items/dense`);
      assertEquals(r.status, 200);
      const { doc } = await r.json();
      assertEquals(doc.v.length, 1_100_000);
    } finally {
      server?.kill();
      await server?.status;
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});
