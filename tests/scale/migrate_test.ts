// `storage migrate`: a data directory with all three families' data, copied into PostgreSQL + S3, answers the
// same reads byte for byte on a node started on the copy, and its stream replays the same events and indexes.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { startSwift, swiftSkipReason } from "../fixtures/swift.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, fastEnv, login } from "../authmethods/helpers.ts";
import { nodeEvent, publish, rootSecret } from "../events/stream_helpers.ts";
import { runStorageCli } from "../../cli/storage/mod.ts";

const skip = postgresSkipReason ?? swiftSkipReason;
if (skip) console.warn(`storage migrate tests skipped: ${skip}`);

const env = {
  ...fastEnv,
  WHARF_PUBLIC_URL: "https://wharf.example.com",
  WHARF_REGISTRY_ADMIN_PASSWORD: "admin-password-1",
  WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
  WHARF_EVENTS_HEARTBEAT_MS: "100",
};

async function streamText(url: string): Promise<string> {
  // The backlog, then the stream is cut: what it served is compared as text.
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/event/stream?index=1`, {
    headers: { "X-Nomad-Token": rootSecret },
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  let text = "";
  const deadline = Date.now() + 1500;
  while (Date.now() < deadline) {
    const next = await Promise.race([
      reader.read(),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline - Date.now())),
    ]);
    if (!next || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  await reader.cancel().catch(() => {});
  controller.abort();
  // Let the server see the stream's connection end before anything shuts it down.
  await new Promise((r) => setTimeout(r, 300));
  // Heartbeats ({}) come at their own pace: only data lines count.
  return text.split("\n").filter((l) => l.startsWith('{"Events"') || l.includes('"Index"')).join("\n");
}

Deno.test({
  name:
    "storage migrate copies a data directory into PostgreSQL + S3: same reads, same stream, refuses twice",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const [pg, swift] = await Promise.all([startPostgres(), startSwift()]);
    const dataDir = await Deno.makeTempDir({ prefix: "wharf-migrate-" });
    const nodeDir = await Deno.makeTempDir({ prefix: "wharf-migrated-" });
    try {
      // All three families' data on the embedded store.
      let srv = await startTestServer(env, dataDir);
      const registry = new RegistryClient(srv.url);
      const admin = await registry.login("admin", "admin-password-1");
      assertEquals((await registry.post("/api/v1/boxes", { name: "devbox" }, { token: admin })).status, 200);
      const V = "/api/v1/box/admin/devbox/version/1.0.0";
      await registry.post("/api/v1/box/admin/devbox/versions", { version: { version: "1.0.0" } }, {
        token: admin,
      });
      await registry.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token: admin });
      const { upload_path } = (await registry.get(`${V}/provider/virtualbox/upload`, { token: admin })).body;
      const put = await fetch(upload_path.replace("https://wharf.example.com", srv.url), {
        method: "PUT",
        body: new Uint8Array(300_000).fill(7),
      });
      assertEquals(put.status, 200, await put.text());
      assertEquals((await registry.put(`${V}/release`, undefined, { token: admin })).status, 200);
      const download = "/admin/boxes/devbox/versions/1.0.0/providers/virtualbox.box";
      const auth0 = { headers: { Authorization: `Bearer ${admin}` } };
      assertEquals((await fetch(srv.url + download, auth0).then((r) => r.arrayBuffer())).byteLength, 300_000);
      const anon = new AuthClient(srv.url);
      const scope = await anon.get("/v1/auth-methods?scope_id=global");
      const primary = scope.body.items.find((m: { is_primary?: boolean }) => m.is_primary);
      const auth = new AuthClient(srv.url, await login(anon, primary.id, "admin", adminPassword));
      assertEquals(
        (await auth.post("/v1/auth-methods", { scope_id: "global", type: "password", version: 0 })).status,
        200,
      );
      for (let i = 0; i < 5; i++) await publish(srv.url, [nodeEvent(`n${i}`)]);
      const reads = [
        "/api/v1/box/admin/devbox",
        "/admin/devbox",
        "/api/v1/search?q=devbox",
        "/v1/auth-methods?scope_id=global",
        "/v1/acl/tokens",
        "/v1/acl/policies",
      ];
      const read = async (url: string) => {
        const out: string[] = [];
        for (const path of reads) {
          const r = await fetch(url + path, {
            headers: {
              Authorization: `Bearer ${admin}`,
              "X-Nomad-Token": rootSecret,
              Accept: "application/json",
            },
          });
          // A list token encodes the time and index of the request that made it: the one thing that may differ.
          out.push(
            `${path} ${r.status} ${(await r.text()).replace(/"list_token":"[^"]*"/, '"list_token":…')}`,
          );
        }
        return out;
      };
      const before = await read(srv.url);
      const streamBefore = await streamText(srv.url);
      assert(streamBefore.includes('"Key":"n4"'));
      const rootKey = (await Deno.readTextFile(`${dataDir}/root.key`)).trim();
      await srv.stop({ keepData: true });
      // As if the server had crashed after writing the documents and before the manifest: the checkpoint lags
      // the log by 5 batches, which the migrated nodes replay from the log table.
      const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
      assert(manifest.checkpointIndex > 10);
      await Deno.writeTextFile(
        `${dataDir}/manifest.json`,
        JSON.stringify({ checkpointIndex: manifest.checkpointIndex - 5 }),
      );

      const databaseUrl = await pg.createDatabase();
      const target = {
        ...swift.env("wharf-migrated"),
        WHARF_DATABASE_URL: databaseUrl,
        WHARF_DOWNLOADS: "proxy",
      };
      const lines: string[] = [];
      const code = await runStorageCli(
        ["migrate", "--data-dir", dataDir],
        target,
        (l) => lines.push(l),
        (l) => lines.push(l),
      );
      assertEquals(code, 0, lines.join("\n"));
      assert(lines.some((l) => l.startsWith("verified:")), lines.join("\n"));
      const atCheckpoint = `(checkpoint at index ${manifest.checkpointIndex - 5})`;
      assert(lines.some((l) => l.startsWith("documents: ") && l.endsWith(atCheckpoint)), lines.join("\n"));
      assert(lines.some((l) => l.startsWith("blobs: 1 copied")), lines.join("\n"));
      const again: string[] = [];
      assertEquals(
        await runStorageCli(
          ["migrate", "--data-dir", dataDir],
          target,
          (l) => again.push(l),
          (l) => again.push(l),
        ),
        2,
      );
      assert(again.join("\n").includes("already holds wharf data"));

      srv = await startTestServer({ ...env, ...target, WHARF_ROOT_KEY: rootKey }, nodeDir);
      try {
        assertEquals(await read(srv.url), before);
        assertEquals(await streamText(srv.url), streamBefore);
        const file = await fetch(srv.url + download, auth0);
        assertEquals(file.status, 200);
        assertEquals((await file.arrayBuffer()).byteLength, 300_000);
      } finally {
        await srv.stop({ keepData: true });
      }
    } finally {
      await Deno.remove(dataDir, { recursive: true });
      await Deno.remove(nodeDir, { recursive: true });
      await Promise.all([pg.stop(), swift.stop()]);
    }
  },
});
