// Upload PUTs that break off or lie about their framing (docs/registry.md#uploads-and-limits): whatever the client
// does mid-body, no temp file stays in the data dir (or the bucket), nothing stored changes, and a later clean
// answer is no 5xx.

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { uploadLeftovers } from "../helpers/stored.ts";
import { bootstrapRegistry, clientTestEnv } from "../registry_clients/registry_api.ts";
import { seedBoxes, snapshotRegistry } from "./fixture.ts";
import { rawRequest } from "./raw_http.ts";

const encoder = new TextEncoder();

async function tempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      if (entry.isDirectory) await walk(`${path}/${entry.name}`);
      else if (entry.name.endsWith(".tmp")) found.push(`${path}/${entry.name}`);
    }
  };
  await walk(dir);
  return found;
}

/** Temp files (and, on S3, tmp/ objects and multipart uploads) go asynchronously once the server notices the
 * broken body: poll, bounded. */
async function waitForNoTempFiles(server: TestServer): Promise<string[]> {
  const leftovers =
    async () => [...new Set([...await tempFiles(server.dataDir), ...await uploadLeftovers(server)])];
  let left = await leftovers();
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await leftovers();
  }
  return left;
}

type Breakage = "short-content-length" | "unterminated-chunks" | "malformed-chunk";

/** Sends a PUT head and part of a body as `breakage` says, then closes the connection. */
async function brokenUpload(
  baseUrl: string,
  path: string,
  breakage: Breakage,
  declared: number,
  sent: number,
) {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const chunked = breakage !== "short-content-length";
  const head = `PUT ${path} HTTP/1.1\r\nHost: ${url.host}\r\n` +
    (chunked ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${declared}\r\n`) + "\r\n";
  try {
    await conn.write(encoder.encode(head));
    const payload = crypto.getRandomValues(new Uint8Array(Math.min(sent, 65536)));
    if (breakage === "short-content-length") await conn.write(payload);
    if (breakage === "unterminated-chunks") {
      await conn.write(encoder.encode(`${payload.length.toString(16)}\r\n`));
      await conn.write(payload);
      await conn.write(encoder.encode("\r\n"));
    }
    if (breakage === "malformed-chunk") await conn.write(encoder.encode(`10\r\n0123456789abcdef\r\nzz\r\n`));
    await new Promise((r) => setTimeout(r, 20));
  } catch {
    // the server may already have answered and closed
  } finally {
    conn.close();
  }
}

Deno.test("broken upload PUTs leave no temp file and change nothing", async () => {
  const server = await startTestServer(clientTestEnv);
  try {
    const seeded = await seedBoxes(await bootstrapRegistry(server.url));
    const { api, aliceToken: token } = seeded;
    const before = await snapshotRegistry(seeded);
    const P = "/api/v1/box/acme/devbox/version/1.1.0/provider/libvirt";
    const prepared = await api.expectOk("GET", `${P}/upload`, { token });
    const uploadPath = new URL(String(prepared.upload_path)).pathname;

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Breakage>("short-content-length", "unterminated-chunks", "malformed-chunk"),
        fc.integer({ min: 1024, max: 4 * 1024 * 1024 }),
        fc.integer({ min: 0, max: 60_000 }),
        async (breakage, declared, sent) => {
          await brokenUpload(server.url, uploadPath, breakage, declared, Math.min(sent, declared - 1));
          assertEquals(await waitForNoTempFiles(server), [], `after ${breakage}`);
        },
      ),
      { numRuns: 30 },
    );

    // A failed PUT does not consume the id: an empty body is refused with 422, not a 5xx or 404.
    const empty = await rawRequest(server.url, "PUT", uploadPath, { body: new Uint8Array(0) });
    assertEquals(empty.status, 422, empty.text);

    // public-box's provider carries a sha256 checksum that random bytes cannot match.
    const checked = await api.expectOk(
      "GET",
      "/api/v1/box/alice/public-box/version/0.1.0/provider/virtualbox/upload",
      { token },
    );
    const mismatch = await rawRequest(server.url, "PUT", new URL(String(checked.upload_path)).pathname, {
      body: crypto.getRandomValues(new Uint8Array(60_000)),
    });
    assertEquals(mismatch.status, 422, mismatch.text);
    assert(mismatch.text.includes("Checksum mismatch"), mismatch.text);

    assertEquals(await waitForNoTempFiles(server), []);
    assertEquals(await snapshotRegistry(seeded), before);
  } finally {
    await server.stop();
  }
});
