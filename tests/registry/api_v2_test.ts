// API v2 over HTTP (docs/registry.md#how-vagrant-23-and-24-see-the-same-box): the same box as v1 and v2 clients see
// it, metadata per architecture, per-architecture downloads with every v1 rule, uploads through v2, the v2 twins of
// v1 routes, and a data directory written before architectures existed.

import { assert, assertEquals } from "../helpers/assert.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { startTestServer } from "../helpers/server.ts";
import { ADMIN_PASSWORD, Client, createOrg, createUser, type Fixture, registryTest } from "./helpers.ts";
import { boxWithVersion, createV2, URL_A, V2 } from "./arch_helpers.ts";
import { loggedEvents, openStoredData } from "../helpers/stored.ts";

const DL = "/alice/boxes/devbox/versions/1.0.0/providers/virtualbox";

function bytes(n: number, seed: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(n).map((_, i) => (i * seed + 3) & 0xff);
}

/** Uploads `data` to the v2 provider `name/arch` (standard upload). */
async function upload(f: Fixture, token: string, name: string, arch: string, data: Uint8Array<ArrayBuffer>) {
  const prep = await f.api.get(`${V2}/provider/${name}/${arch}/upload`, { token });
  assertEquals(prep.status, 200, prep.text);
  assert(prep.body.upload_path.startsWith(`${f.srv.url}/api/v2/uploads/`), prep.text);
  const put = await fetch(prep.body.upload_path, { method: "PUT", body: data });
  assertEquals(put.status, 200, await put.text());
}

/** amd64 (default) and arm64 files of virtualbox, released. */
async function twoArchitectures(f: Fixture, token: string) {
  await boxWithVersion(f, token);
  const amd = bytes(3000, 7);
  const arm = bytes(4000, 11);
  await createV2(f, token, "virtualbox", { architecture: "amd64", default_architecture: true });
  await createV2(f, token, "virtualbox", { architecture: "arm64" });
  await upload(f, token, "virtualbox", "amd64", amd);
  await upload(f, token, "virtualbox", "arm64", arm);
  assertEquals((await f.api.put(`${V2}/release`, undefined, { token })).status, 200);
  return { amd, arm };
}

registryTest("v1 and v2 clients see the same multi-architecture box in their own shapes", async (f) => {
  const alice = await createUser(f, "alice");
  await twoArchitectures(f, alice);
  const v1 = (await f.api.get("/api/v1/box/alice/devbox")).body;
  const v2 = (await f.api.get("/api/v2/box/alice/devbox")).body;
  assertEquals(Object.keys(v2).sort(), Object.keys(v1).sort());
  assertEquals(Object.keys(v2).length, 13);
  const p1 = v1.versions[0].providers;
  const p2 = v2.versions[0].providers;
  assertEquals(p1.length, 1);
  assertEquals(Object.keys(p1[0]).sort(), [
    "created_at",
    "download_url",
    "hosted",
    "hosted_token",
    "name",
    "original_url",
    "updated_at",
    "url",
  ]);
  assertEquals(p1[0].download_url, `${f.srv.url}${DL}.box`);
  assertEquals(
    p2.map((p: Record<string, unknown>) => [p.architecture, p.default_architecture, p.download_url]),
    [
      ["amd64", true, `${f.srv.url}${DL}/amd64/vagrant.box`],
      ["arm64", false, `${f.srv.url}${DL}/arm64/vagrant.box`],
    ],
  );
  assertEquals(v1.versions[0].release_url, `${f.srv.url}/api/v1/box/alice/devbox/version/1.0.0/release`);
  assertEquals(v2.versions[0].revoke_url, `${f.srv.url}${V2}/revoke`);
  assertEquals(v2.current_version.providers.length, 2);
  // Version, provider, user listing and search follow the same split.
  const ver1 = (await f.api.get("/api/v1/box/alice/devbox/version/1.0.0")).body;
  assertEquals(ver1.providers.length, 1);
  const prov2 = (await f.api.get(`${V2}/provider/virtualbox/arm64`)).body;
  assertEquals([prov2.architecture, prov2.checksum_type, prov2.hosted], ["arm64", null, true]);
  const user1 = (await f.api.get("/api/v1/user/alice")).body;
  const user2 = (await f.api.get("/api/v2/user/alice")).body;
  assertEquals([
    user1.boxes[0].current_version.providers.length,
    user2.boxes[0].current_version.providers.length,
  ], [
    1,
    2,
  ]);
  assert(!("versions" in user2.boxes[0]));
  for (const api of ["v1", "v2"]) {
    // Twice each: the second answer comes from the search caches, which must keep the APIs apart.
    for (let i = 0; i < 2; i++) {
      const s = (await f.api.get(`/api/${api}/search?q=devbox`)).body;
      assertEquals(s.boxes[0].current_version.providers.length, api === "v1" ? 1 : 2, api);
      assertEquals("architecture" in s.boxes[0].current_version.providers[0], api === "v2", api);
    }
  }
});

registryTest("search by architecture, alone and with a provider, in v1 and v2", async (f) => {
  const alice = await createUser(f, "alice");
  await twoArchitectures(f, alice);
  const tags = async (query: string) =>
    (await f.api.get(`/api/${query}`)).body.boxes.map((b: { tag: string }) => b.tag);
  for (const api of ["v1", "v2"]) {
    assertEquals(await tags(`${api}/search?architecture=arm64`), ["alice/devbox"]);
    assertEquals(await tags(`${api}/search?architecture=i386`), []);
    assertEquals(await tags(`${api}/search?provider=virtualbox&architecture=arm64`), ["alice/devbox"]);
    assertEquals(await tags(`${api}/search?provider=libvirt&architecture=arm64`), []);
  }
  // With both, one provider must match both: libvirt exists, but only for s390x.
  await f.api.post("/api/v1/box/alice/devbox/versions", { version: "2.0.0" }, { token: alice });
  await f.api.post("/api/v2/box/alice/devbox/version/2.0.0/providers", {
    name: "libvirt",
    architecture: "s390x",
    url: URL_A,
  }, { token: alice });
  await f.api.post("/api/v2/box/alice/devbox/version/2.0.0/providers", {
    name: "virtualbox",
    architecture: "amd64",
    url: URL_A,
  }, { token: alice });
  await f.api.put("/api/v2/box/alice/devbox/version/2.0.0/release", undefined, { token: alice });
  assertEquals(await tags("v2/search?provider=libvirt&architecture=amd64"), []);
  assertEquals(await tags("v2/search?provider=libvirt&architecture=s390x"), ["alice/devbox"]);
  assertEquals(await tags("v2/search?architecture=arm64"), []);
});

registryTest(
  "metadata: v2 lists every architecture, the root URL each name's default with its keys",
  async (f) => {
    const alice = await createUser(f, "alice");
    const { amd, arm } = await twoArchitectures(f, alice);
    for (const path of ["/api/v2/vagrant/alice/devbox", "/alice/devbox"]) {
      const head = await fetch(f.srv.url + path, { method: "HEAD", headers: { Accept: "application/json" } });
      await head.body?.cancel();
      assertEquals([head.status, head.headers.get("Content-Type")], [200, "application/json"], path);
    }
    const v2 = await f.api.get("/api/v2/vagrant/Alice/DevBox");
    assertEquals(v2.headers.get("Cache-Control"), "no-cache");
    assertEquals(v2.body.name, "Alice/DevBox");
    assertEquals(v2.body.versions[0].providers, [
      {
        name: "virtualbox",
        url: `${f.srv.url}${DL}/amd64/vagrant.box`,
        checksum: sha256Hex(amd),
        checksum_type: "sha256",
        architecture: "amd64",
        default_architecture: true,
      },
      {
        name: "virtualbox",
        url: `${f.srv.url}${DL}/arm64/vagrant.box`,
        checksum: sha256Hex(arm),
        checksum_type: "sha256",
        architecture: "arm64",
        default_architecture: false,
      },
    ]);
    const root = (await f.api.get("/alice/devbox")).body;
    assertEquals(root.versions[0].providers, [{
      name: "virtualbox",
      url: `${f.srv.url}${DL}.box`,
      checksum: sha256Hex(amd),
      checksum_type: "sha256",
      architecture: "amd64",
      default_architecture: true,
    }]);
    // Same 404s as the root URL.
    assertEquals((await f.api.get("/api/v2/vagrant/alice/nothing")).status, 404);
    assertEquals((await f.api.get("/api/v2/vagrant/nobody/devbox")).status, 404);
    // A new default moves the root URL's entry (the cached bodies follow the write).
    await f.api.put(`${V2}/provider/virtualbox/arm64`, { default_architecture: true }, { token: alice });
    assertEquals((await f.api.get("/alice/devbox")).body.versions[0].providers[0].architecture, "arm64");
    assertEquals((await (await fetch(`${f.srv.url}${DL}.box`)).arrayBuffer()).byteLength, arm.length);
  },
);

// wharf serving the bytes itself (an object store with WHARF_DOWNLOADS=redirect hands Range and ETag to the store).
registryTest(
  "per-architecture downloads keep every v1 rule: Range, ETag, counting, 302, privacy",
  { WHARF_DOWNLOADS: "proxy" },
  async (f) => {
    const alice = await createUser(f, "alice");
    const { amd, arm } = await twoArchitectures(f, alice);
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(f.srv.url + path, { headers, redirect: "manual" });
    const full = await get(`${DL}/arm64/vagrant.box`);
    assertEquals(new Uint8Array(await full.arrayBuffer()), arm);
    assertEquals(full.headers.get("ETag"), `"${sha256Hex(arm)}"`);
    assertEquals(full.headers.get("Accept-Ranges"), "bytes");
    // The v1 URL serves the default architecture.
    assertEquals(new Uint8Array(await (await get(`${DL}.box`)).arrayBuffer()), amd);
    const part = await get(`${DL}/amd64/vagrant.box`, { Range: "bytes=10-19" });
    assertEquals([part.status, part.headers.get("Content-Range")], [206, `bytes 10-19/${amd.length}`]);
    assertEquals(new Uint8Array(await part.arrayBuffer()), amd.slice(10, 20));
    const bad = await get(`${DL}/amd64/vagrant.box`, { Range: "bytes=9999-" });
    await bad.body?.cancel();
    assertEquals(bad.status, 416);
    const same = await get(`${DL}/arm64/vagrant.box`, { "If-None-Match": `"${sha256Hex(arm)}"` });
    await same.body?.cancel();
    assertEquals(same.status, 304);
    const head = await fetch(`${f.srv.url}${DL}/arm64/vagrant.box`, { method: "HEAD" });
    await head.body?.cancel();
    assertEquals([head.status, head.headers.get("Content-Length")], [200, String(arm.length)]);
    for (
      const missing of [
        `${DL}/i386/vagrant.box`,
        `${DL}/bogus/vagrant.box`,
        "/alice/boxes/devbox/versions/9/providers/virtualbox/amd64/vagrant.box",
      ]
    ) {
      const r = await get(missing);
      await r.body?.cancel();
      assertEquals(r.status, 404, missing);
    }
    // External files redirect, counted; full GETs counted (2 above + 1 range from 0 below), HEAD/304/resumes not.
    await f.api.post("/api/v1/box/alice/devbox/versions", { version: "2.0.0" }, { token: alice });
    const ext = await f.api.post("/api/v2/box/alice/devbox/version/2.0.0/providers", {
      name: "libvirt",
      architecture: "arm64",
      url: URL_A,
    }, { token: alice });
    assertEquals(ext.status, 200, ext.text);
    await f.api.put("/api/v2/box/alice/devbox/version/2.0.0/release", undefined, { token: alice });
    const redirect = await get("/alice/boxes/devbox/versions/2.0.0/providers/libvirt/arm64/vagrant.box");
    await redirect.body?.cancel();
    assertEquals([redirect.status, redirect.headers.get("Location")], [302, URL_A]);
    const fromZero = await get(`${DL}/arm64/vagrant.box`, { Range: "bytes=0-9" });
    await fromZero.body?.cancel();
    await new Promise((r) => setTimeout(r, 50));
    assertEquals((await f.api.get("/api/v2/box/alice/devbox")).body.downloads, 4);
    // Private: the per-architecture URL and the v2 metadata are 404 to others, fine for members.
    await f.api.put("/api/v1/box/alice/devbox", { is_private: true }, { token: alice });
    const bob = await createUser(f, "bob");
    for (const token of [undefined, bob]) {
      assertEquals((await f.api.get(`${DL}/arm64/vagrant.box`, { token })).status, 404);
      assertEquals((await f.api.get("/api/v2/vagrant/alice/devbox", { token })).status, 404);
    }
    const own = await f.api.get("/api/v2/vagrant/alice/devbox", { token: alice });
    assertEquals([own.status, own.headers.get("Cache-Control")], [200, "private, no-store"]);
  },
);

registryTest(
  "direct uploads through v2 name the architecture in the callback and void on a move",
  async (f) => {
    const alice = await createUser(f, "alice");
    await boxWithVersion(f, alice);
    await createV2(f, alice, "virtualbox", { architecture: "amd64" });
    await createV2(f, alice, "virtualbox", { architecture: "arm64" });
    const prep = (await f.api.get(`${V2}/provider/virtualbox/arm64/upload/direct`, { token: alice })).body;
    const id = prep.upload_path.split("/").pop();
    assertEquals(prep.callback, `${f.srv.url}${V2}/provider/virtualbox/arm64/upload/direct/${id}`);
    const data = bytes(2000, 5);
    const staged = await fetch(prep.upload_path, { method: "PUT", body: data });
    assertEquals([staged.status, (await staged.json()).hosted], [200, false]);
    // The callback under another architecture's path is not this upload's.
    const wrong = await f.api.put(`${V2}/provider/virtualbox/amd64/upload/direct/${id}`, undefined, {
      token: alice,
    });
    assertEquals(wrong.status, 404);
    const done = await f.api.put(new URL(prep.callback).pathname, undefined, { token: alice });
    assertEquals([done.status, done.body.hosted, done.body.architecture], [200, true, "arm64"], done.text);
    const v = (await f.api.get(V2, { token: alice })).body.providers;
    assertEquals(v.map((p: { hosted: boolean }) => p.hosted), [false, true]);
    // A standard upload prepared through v2, then its provider moves to another architecture: the id is void.
    const std = (await f.api.get(`${V2}/provider/virtualbox/amd64/upload`, { token: alice })).body;
    await f.api.put(`${V2}/provider/virtualbox/amd64`, { architecture: "i386" }, { token: alice });
    assertEquals(
      await fetch(std.upload_path, { method: "PUT", body: data }).then((r) =>
        r.body?.cancel().then(() => r.status)
      ),
      404,
    );
    // Events carry the architecture in their key.
    const uploaded = (await loggedEvents(f.srv)).filter((e) => e.Type === "ProviderUploaded");
    assertEquals(uploaded.map((e) => e.Key), ["alice/devbox/1.0.0/virtualbox/arm64"]);
  },
);

registryTest("every v1 route answers under /api/v2: tokens, users, admin API, unknown paths", async (f) => {
  const alice = await createUser(f, "alice");
  const who = await f.api.get("/api/v2/authenticate", { token: alice });
  assertEquals([who.status, who.body], [200, { user: { username: "alice" } }]);
  assertEquals((await f.api.get("/api/v2/authenticate")).body.errors, ["Authentication required!"]);
  const login = await f.api.post("/api/v2/authenticate", {
    user: { login: "alice", password: "alice-password" },
  });
  assertEquals(login.status, 200);
  const users = await f.api.get("/api/v2/admin/users", { token: f.admin });
  assertEquals(users.body.users.length, 2);
  assertEquals((await f.api.get("/api/v2/admin/users", { token: alice })).status, 403);
  await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
  const org = await f.api.post("/api/v2/boxes", { username: "acme", name: "tool" }, { token: alice });
  assertEquals([org.status, org.body.tag], [200, "acme/tool"]);
  const nf = await f.api.get("/api/v2/nothing/here");
  assertEquals([nf.status, nf.body], [404, { errors: ["Resource not found!"], success: false }]);
  const na = await f.api.call("PATCH", "/api/v2/boxes");
  assertEquals([na.status, na.headers.get("Allow")], [405, "POST"]);
  // A v1 provider path (no architecture) under /api/v2 is not a route.
  assertEquals((await f.api.get("/api/v2/box/acme/tool/version/1.0.0/provider/virtualbox")).status, 404);
  assertEquals((await f.api.delete("/api/v2/authenticate", { token: login.body.token })).status, 204);
});

Deno.test("a data directory from before architectures loads its providers as unknown defaults", async () => {
  const srv = await startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  const api = new Client(srv.url);
  const admin = await api.login("admin", ADMIN_PASSWORD);
  const f = { srv, api, admin, stop: () => srv.stop() };
  const alice = await createUser(f, "alice");
  await boxWithVersion(f, alice);
  await api.post("/api/v1/box/alice/devbox/version/1.0.0/providers", { name: "virtualbox", url: URL_A }, {
    token: alice,
  });
  await api.put("/api/v1/box/alice/devbox/version/1.0.0/release", undefined, { token: alice });
  await srv.stop({ keepData: true });
  // Rewrite the box as an older wharf stored it: providers without architecture fields.
  const data = await openStoredData(srv);
  const [stored] = [...data.store.list<Record<string, unknown>>("registry/boxes")];
  const doc = structuredClone(stored!.doc) as { versions: { providers: Record<string, unknown>[] }[] };
  for (const p of doc.versions[0]!.providers) {
    delete p.architecture;
    delete p.default_architecture;
  }
  await data.store.transact(["registry/write"], () => ({
    writes: [{ collection: "registry/boxes", id: stored!.id, doc, ifVersion: stored!.version }],
  }));
  await data.close();
  const again = await startTestServer(srv.env, srv.dataDir);
  try {
    const c = new Client(again.url);
    const p = (await c.get(`${V2}/provider/virtualbox/unknown`)).body;
    assertEquals([p.architecture, p.default_architecture, p.url], ["unknown", true, URL_A]);
    const v1 = (await c.get("/api/v1/box/alice/devbox/version/1.0.0/provider/virtualbox")).body;
    assertEquals([v1.url, "architecture" in v1], [URL_A, false]);
    const meta = (await c.get("/alice/devbox")).body.versions[0].providers[0];
    assertEquals([meta.architecture, meta.default_architecture], ["unknown", true]);
    // A v2 client adds amd64 beside it; the unknown default keeps the flag and the v1 view.
    const token = await c.login("alice", "alice-password");
    const amd = await c.post(`${V2}/providers`, { name: "virtualbox", architecture: "amd64", url: URL_A }, {
      token,
    });
    assertEquals([amd.status, amd.body.default_architecture], [200, false], amd.text);
    const v2meta = (await c.get("/api/v2/vagrant/alice/devbox")).body.versions[0].providers;
    assertEquals(v2meta.map((x: { architecture: string }) => x.architecture), ["unknown", "amd64"]);
  } finally {
    await again.stop();
  }
});
