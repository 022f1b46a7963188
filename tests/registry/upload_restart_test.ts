// Registry upload URLs survive a server restart (kill -9): prepared standard and direct uploads and a staged
// direct upload complete after it, expired ones are swept with their staged file, and no upload id is on disk.

import { assert, assertEquals } from "../helpers/assert.ts";
import { SuccessiveServers } from "../helpers/successive_servers.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { packedCollections } from "../../app.ts";
import { DataDir } from "../../lib/store/mod.ts";
import { ADMIN_PASSWORD, aliceWithDevbox, Client } from "./helpers.ts";
import { dataDirText } from "../helpers/files.ts";

const UPLOADS = "registry/uploads";
const baseEnv = { WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD };

/** A client of the server `d` starts next with `env`. */
async function startClient(d: SuccessiveServers, env: Record<string, string> = {}): Promise<Client> {
  return new Client((await d.start(env)).url);
}

/** alice with box alice/devbox 1.0.0 and the providers `names` (no file yet); returns alice's token. */
async function setUp(api: Client, names: string[]): Promise<string> {
  const alice = await aliceWithDevbox(api);
  for (const name of names) {
    const p = await api.post("/api/v1/box/alice/devbox/version/1.0.0/providers", { provider: { name } }, {
      token: alice,
    });
    assertEquals(p.status, 200, p.text);
  }
  return alice;
}

const prov = (name: string) => `/api/v1/box/alice/devbox/version/1.0.0/provider/${name}`;

function content(seed: number, n = 50_000): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

async function put(url: string, body: Uint8Array<ArrayBuffer>): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: "PUT", body });
  return { status: r.status, text: await r.text() };
}

async function downloadSha(api: Client, token: string, name: string): Promise<string> {
  const r = await fetch(`${api.url}/alice/boxes/devbox/versions/1.0.0/providers/${name}.box`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assertEquals(r.status, 200, `download of ${name}`);
  return sha256Hex(new Uint8Array(await r.arrayBuffer()));
}

/** How many upload sessions the data dir holds, read with the server stopped. */
async function storedUploads(dir: string): Promise<number> {
  const data = await DataDir.open(dir, { packedCollections });
  try {
    return data.store.count(UPLOADS);
  } finally {
    await data.close();
  }
}

const idOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

Deno.test("prepared and staged uploads complete after a kill -9 restart, with no upload id on disk", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-upload-restart-" });
  const d = new SuccessiveServers(dir, baseEnv);
  try {
    let api = await startClient(d);
    const alice = await setUp(api, ["standard", "direct", "staged"]);
    const std = (await api.get(`${prov("standard")}/upload`, { token: alice })).body;
    const direct = (await api.get(`${prov("direct")}/upload/direct`, { token: alice })).body;
    const staged = (await api.get(`${prov("staged")}/upload/direct`, { token: alice })).body;
    const stagedBytes = content(3);
    assertEquals((await put(staged.upload_path, stagedBytes)).status, 200);
    const ids = [std.upload_path, direct.upload_path, staged.upload_path].map(idOf);

    await d.stop("SIGKILL");
    api = await startClient(d, { WHARF_REGISTRY_ORPHAN_GRACE: "0s" });
    const rebase = (url: string) => api.url + new URL(url).pathname;

    // The staged file survived the restart and its orphan sweep (grace 0): the callback makes it hosted.
    const cb = await api.put(new URL(staged.callback).pathname, undefined, { token: alice });
    assertEquals(cb.status, 200, cb.text);
    assertEquals(await downloadSha(api, alice, "staged"), sha256Hex(stagedBytes));

    const stdBytes = content(1);
    assertEquals((await put(rebase(std.upload_path), stdBytes)).status, 200);
    assertEquals(await downloadSha(api, alice, "standard"), sha256Hex(stdBytes));
    // Consumed: the URL is gone, as before the change.
    assertEquals((await put(rebase(std.upload_path), stdBytes)).status, 404);

    const directBytes = content(2);
    assertEquals((await put(rebase(direct.upload_path), directBytes)).status, 200);
    await d.stop("SIGKILL");
    api = await startClient(d, { WHARF_REGISTRY_ORPHAN_GRACE: "0s" });
    const cb2 = await api.put(new URL(direct.callback).pathname, undefined, { token: alice });
    assertEquals(cb2.status, 200, cb2.text);
    assertEquals(await downloadSha(api, alice, "direct"), sha256Hex(directBytes));
    assertEquals((await api.put(new URL(direct.callback).pathname, undefined, { token: alice })).status, 404);
    await d.stop("SIGKILL");

    assertEquals(await storedUploads(dir), 0);
    const text = await dataDirText(dir) + d.output;
    for (const id of ids) assert(!text.includes(id), "an upload id is stored or printed in plaintext");
  } finally {
    d.server?.kill("SIGKILL");
    await d.server?.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("uploads that expired while the server was down are gone after the restart, staged file too", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-upload-expiry-" });
  const d = new SuccessiveServers(dir, baseEnv);
  try {
    const ttl = { WHARF_UPLOAD_URL_TTL: "1s" };
    let api = await startClient(d, ttl);
    const alice = await setUp(api, ["standard", "staged"]);
    const std = (await api.get(`${prov("standard")}/upload`, { token: alice })).body;
    const staged = (await api.get(`${prov("staged")}/upload/direct`, { token: alice })).body;
    const bytes = content(4);
    assertEquals((await put(staged.upload_path, bytes)).status, 200);
    await d.stop("SIGKILL");
    await new Promise((r) => setTimeout(r, 1500));

    api = await startClient(d, { ...ttl, WHARF_REGISTRY_ORPHAN_GRACE: "0s" });
    const late = await put(api.url + new URL(std.upload_path).pathname, content(5));
    assertEquals(late.status, 404);
    assertEquals(JSON.parse(late.text).errors, ["Resource not found!"]);
    const cb = await api.put(new URL(staged.callback).pathname, undefined, { token: alice });
    assertEquals(cb.status, 404);
    assertEquals(cb.body.errors, ["Resource not found!"]);
    // The sweep at start deleted the sessions and released the staged file; wait (bounded) for its removal.
    const blobPath = `${dir}/blobs/${sha256Hex(bytes).slice(0, 2)}/${sha256Hex(bytes)}`;
    const deadline = Date.now() + 20_000;
    while (await Deno.stat(blobPath).then(() => true, () => false)) {
      assert(Date.now() < deadline, "the expired staged file was not deleted");
      await new Promise((r) => setTimeout(r, 100));
    }
    await d.stop("SIGTERM");
    assertEquals(await storedUploads(dir), 0);
  } finally {
    d.server?.kill("SIGKILL");
    await d.server?.status;
    await Deno.remove(dir, { recursive: true });
  }
});
