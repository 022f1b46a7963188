// Metadata and downloads as vagrant uses them, and private-box invisibility
// (docs/registry.md#how-vagrant-23-and-24-see-the-same-box, docs/registry.md#users-and-organizations-admin-api).

import { assert, assertEquals } from "../helpers/assert.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { withStarted } from "../helpers/fixture.ts";
import { fileBackendOnly, testDownloadsRedirect } from "../helpers/storage_backend.ts";
import {
  createOrg,
  createUser,
  type Fixture,
  publishExternal,
  registryTest,
  startRegistry,
} from "./helpers.ts";

const DL = "/alice/boxes/devbox/versions/1.0.0/providers/virtualbox.box";

async function hostedBox(f: Fixture, token: string, data: Uint8Array<ArrayBuffer>, isPrivate = false) {
  await f.api.post("/api/v1/boxes", {
    name: "devbox",
    is_private: isPrivate,
    description: "Long",
    short_description: "short",
  }, {
    token,
  });
  const V = "/api/v1/box/alice/devbox/version/1.0.0";
  await f.api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, { token });
  await f.api.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token });
  const { upload_path } = (await f.api.get(`${V}/provider/virtualbox/upload`, { token })).body;
  assertEquals(
    await fetch(upload_path, { method: "PUT", body: data }).then((r) =>
      r.body?.cancel().then(() => r.status)
    ),
    200,
  );
  assertEquals((await f.api.put(`${V}/release`, undefined, { token })).status, 200);
}

function data(n: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(n).map((_, i) => (i * 7) & 0xff);
}

registryTest("metadata answers HEAD and GET with JSON, active versions only and absolute URLs", async (f) => {
  const alice = await createUser(f, "alice");
  const file = data(5000);
  await hostedBox(f, alice, file);
  await f.api.post("/api/v1/box/alice/devbox/versions", { version: { version: "2.0.0" } }, {
    token: alice,
  });
  for (const path of ["/alice/devbox", "//alice/devbox", "/Alice/DevBox"]) {
    const head = await fetch(f.srv.url + path, { method: "HEAD", headers: { Accept: "application/json" } });
    await head.body?.cancel();
    assertEquals(head.status, 200, path);
    assertEquals(head.headers.get("Content-Type"), "application/json");
    const get = await f.api.get(path);
    assertEquals(get.status, 200);
    assertEquals(get.headers.get("Cache-Control"), "no-cache");
    assertEquals(get.body.versions.length, 1);
  }
  const meta = await f.api.get("/Alice/DevBox");
  assertEquals(meta.body, {
    name: "Alice/DevBox",
    description: "Long",
    short_description: "short",
    versions: [{
      version: "1.0.0",
      status: "active",
      description_markdown: null,
      description_html: null,
      providers: [{
        name: "virtualbox",
        url: f.srv.url + DL,
        checksum: sha256Hex(file),
        checksum_type: "sha256",
        // The root URL's entries carry the default architecture's keys too
        // (docs/registry.md#how-vagrant-23-and-24-see-the-same-box).
        architecture: "unknown",
        default_architecture: true,
      }],
    }],
  });
  assertEquals((await f.api.get("/alice/nothing")).status, 404);
  assertEquals((await f.api.post("/alice/devbox", {})).status, 405);
});

// wharf's own serving of a hosted file (an object store with WHARF_DOWNLOADS=redirect hands that to the store:
// the test below and the Vagrant clients' tests cover the 302s).
registryTest("hosted downloads serve Content-Length, ETag, ranges and count full downloads", {
  WHARF_DOWNLOADS: "proxy",
}, async (f) => {
  const alice = await createUser(f, "alice");
  const file = data(10_000);
  await hostedBox(f, alice, file);
  const full = await fetch(f.srv.url + DL);
  assertEquals(full.status, 200);
  assertEquals(full.headers.get("Content-Length"), "10000");
  assertEquals(full.headers.get("Content-Type"), "application/octet-stream");
  assertEquals(full.headers.get("Accept-Ranges"), "bytes");
  assertEquals(full.headers.get("ETag"), `"${sha256Hex(file)}"`);
  assert(full.headers.get("Last-Modified"));
  assertEquals(sha256Hex(new Uint8Array(await full.arrayBuffer())), sha256Hex(file));
  const part = await fetch(f.srv.url + DL, { headers: { Range: "bytes=100-199" } });
  assertEquals(part.status, 206);
  assertEquals(part.headers.get("Content-Range"), "bytes 100-199/10000");
  assertEquals((await part.arrayBuffer()).byteLength, 100);
  const tail = await fetch(f.srv.url + DL, { headers: { Range: "bytes=-10" } });
  assertEquals([tail.status, tail.headers.get("Content-Range")], [206, "bytes 9990-9999/10000"]);
  assertEquals(new Uint8Array(await tail.arrayBuffer()), file.slice(9990));
  // A resume runs to the end of the file: the bytes from its start, and the length it announced.
  const resume = await fetch(f.srv.url + DL, { headers: { Range: "bytes=9000-" } });
  assertEquals([resume.status, resume.headers.get("Content-Length")], [206, "1000"]);
  assertEquals(new Uint8Array(await resume.arrayBuffer()), file.slice(9000));
  const bad = await fetch(f.srv.url + DL, { headers: { Range: "bytes=20000-" } });
  await bad.body?.cancel();
  assertEquals(bad.status, 416);
  assertEquals(bad.headers.get("Content-Range"), "bytes */10000");
  const cached = await fetch(f.srv.url + DL, { headers: { "If-None-Match": `"${sha256Hex(file)}"` } });
  await cached.body?.cancel();
  assertEquals(cached.status, 304);
  const head = await fetch(f.srv.url + DL, { method: "HEAD" });
  await head.body?.cancel();
  const fromZero = await fetch(f.srv.url + DL, { headers: { Range: "bytes=0-9" } });
  await fromZero.body?.cancel();
  // Counted: the full GET and the range from byte 0; not the resume, the HEAD, the 304 or the 416.
  assertEquals((await f.api.get("/api/v1/box/alice/devbox")).body.downloads, 2);
  assertEquals(
    await fetch(f.srv.url + "/alice/boxes/devbox/versions/9.9.9/providers/virtualbox.box").then(
      async (r) => {
        await r.body?.cancel();
        return r.status;
      },
    ),
    404,
  );
});

const abortedTest = "hosted downloads a client abandons midway leave no blob file open";
Deno.test({
  name: abortedTest,
  ignore: fileBackendOnly(abortedTest, "counts the data directory's open blob files"),
  fn: () =>
    withStarted(() => startRegistry(), async (f) => {
      const alice = await createUser(f, "alice");
      await hostedBox(f, alice, data(8 * 1024 * 1024));
      const blobDir = `${await Deno.realPath(f.srv.dataDir)}/blobs/`;
      const openBlobs = () =>
        [...Deno.readDirSync("/proc/self/fd")].filter((e) => {
          try {
            return Deno.readLinkSync(`/proc/self/fd/${e.name}`).startsWith(blobDir);
          } catch {
            return false; // closed meanwhile
          }
        }).length;
      // 20 whole downloads and 20 resumes, each dropped after its first chunk.
      for (let i = 0; i < 40; i++) {
        const controller = new AbortController();
        const r = await fetch(f.srv.url + DL, {
          signal: controller.signal,
          headers: i % 2 ? { Range: "bytes=1000-" } : {},
        });
        assertEquals(r.status, i % 2 ? 206 : 200);
        const reader = r.body!.getReader();
        assert(!(await reader.read()).done);
        controller.abort();
        await reader.closed.catch(() => {});
      }
      let open = openBlobs();
      for (let waited = 0; open > 0 && waited < 5_000; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
        open = openBlobs();
      }
      assertEquals(open, 0);
      // And the file is still served whole afterwards.
      const whole = await fetch(f.srv.url + DL);
      assertEquals((await whole.arrayBuffer()).byteLength, 8 * 1024 * 1024);
    }),
});

// RFC 9110 §13.1.3 as docs/storage.md states it: If-Modified-Since against the upload's Last-Modified, in all three
// HTTP date forms; a date that cannot be read is ignored; If-None-Match, when sent, decides alone.
registryTest("hosted downloads answer If-Modified-Since with 304 unless the file is newer", {
  WHARF_DOWNLOADS: "proxy",
}, async (f) => {
  const alice = await createUser(f, "alice");
  const file = data(5_000);
  await hostedBox(f, alice, file);
  const status = async (headers: Record<string, string>, method = "GET") => {
    const r = await fetch(f.srv.url + DL, { method, headers });
    const body = await r.arrayBuffer();
    return [r.status, body.byteLength];
  };
  const full = await fetch(f.srv.url + DL);
  await full.body?.cancel();
  const modified = Date.parse(full.headers.get("Last-Modified")!);
  assert(!Number.isNaN(modified), full.headers.get("Last-Modified") ?? "no Last-Modified");
  const imf = (ms: number) => new Date(ms).toUTCString();
  const day = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const at = new Date(modified);
  const rfc850 = `${day[at.getUTCDay()]}, ${imf(modified).slice(5, 7)}-${imf(modified).slice(8, 11)}-` +
    `${imf(modified).slice(14, 16)} ${imf(modified).slice(17, 25)} GMT`;
  const asctime = `${imf(modified).slice(0, 3)} ${imf(modified).slice(8, 11)} ` +
    `${String(at.getUTCDate()).padStart(2, " ")} ${imf(modified).slice(17, 25)} ${at.getUTCFullYear()}`;
  assertEquals(await status({ "If-Modified-Since": imf(modified) }), [304, 0]);
  assertEquals(await status({ "If-Modified-Since": rfc850 }), [304, 0], rfc850);
  assertEquals(await status({ "If-Modified-Since": asctime }), [304, 0], asctime);
  assertEquals(await status({ "If-Modified-Since": imf(modified + 3_600_000) }), [304, 0]);
  assertEquals(await status({ "If-Modified-Since": imf(modified) }, "HEAD"), [304, 0]);
  // Uploaded after the date given: the whole file.
  assertEquals(await status({ "If-Modified-Since": imf(modified - 1000) }), [200, 5_000]);
  assertEquals(await status({ "If-Modified-Since": "yesterday" }), [200, 5_000]);
  // If-None-Match decides alone: another ETag means the file, whatever the date says.
  assertEquals(await status({ "If-None-Match": '"other"', "If-Modified-Since": imf(modified) }), [
    200,
    5_000,
  ]);
  assertEquals(
    await status({ "If-None-Match": `"${sha256Hex(file)}"`, "If-Modified-Since": imf(modified - 1000) }),
    [304, 0],
  );
  // A range asked for with a date it is not newer than: 304, not 206.
  assertEquals(await status({ "If-Modified-Since": imf(modified), Range: "bytes=0-9" }), [304, 0]);
  // Counted: the first GET and the three whole files; no 304.
  assertEquals((await f.api.get("/api/v1/box/alice/devbox")).body.downloads, 4);
});

registryTest("external providers redirect with 302, counted, and metadata points at wharf", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox");
  const r = await f.api.get(DL);
  assertEquals(r.status, 302);
  assertEquals(r.headers.get("Location"), "https://files.example.com/devbox.box");
  assertEquals(r.headers.get("Cache-Control"), "no-store");
  assertEquals((await f.api.get("/api/v1/box/alice/devbox")).body.downloads, 1);
  const meta = await f.api.get("/alice/devbox");
  assertEquals(meta.body.versions[0].providers[0].url, f.srv.url + DL);
  assertEquals(meta.body.versions[0].providers[0].checksum, null);
});

const redirectTest =
  "hosted downloads from an object store redirect to a presigned URL, counted, members only";
Deno.test({
  name: redirectTest,
  ignore: !testDownloadsRedirect && skipped(redirectTest),
  fn: () =>
    withStarted(() => startRegistry(), async (f) => {
      const alice = await createUser(f, "alice");
      const file = data(20_000);
      await hostedBox(f, alice, file, true);
      const r = await f.api.get(DL, { token: alice });
      assertEquals([r.status, r.headers.get("Cache-Control")], [302, "private, no-store"]);
      const location = new URL(r.headers.get("Location")!);
      assert(location.origin !== new URL(f.srv.url).origin, location.href);
      assert(location.searchParams.has("X-Amz-Signature"), location.href);
      const stored = await fetch(location);
      assertEquals(stored.status, 200);
      assertEquals(sha256Hex(new Uint8Array(await stored.arrayBuffer())), sha256Hex(file));
      // A HEAD is answered by wharf (the URL is signed for GET only): size and sha256 ETag, not counted.
      const head = await fetch(f.srv.url + DL, {
        method: "HEAD",
        headers: { Authorization: `Bearer ${alice}` },
      });
      await head.body?.cancel();
      assertEquals(
        [head.status, head.headers.get("Content-Length"), head.headers.get("ETag")],
        [200, "20000", `"${sha256Hex(file)}"`],
      );
      // Counted like a served download (a resume further in is not); others get the same 404 as for a missing box.
      const resume = await f.api.get(DL, { token: alice, headers: { Range: "bytes=100-" } });
      assertEquals(resume.status, 302);
      assertEquals((await f.api.get("/api/v1/box/alice/devbox", { token: alice })).body.downloads, 1);
      assertEquals((await f.api.get(DL)).status, 404);
    }),
});

function skipped(name: string): boolean {
  console.warn(
    `SKIPPED "${name}": hosted downloads redirect only with WHARF_TEST_STORAGE=postgres-s3 ` +
      "WHARF_TEST_DOWNLOADS=redirect (deno task test:cluster)",
  );
  return true;
}

registryTest(
  "a private box is invisible to others in box, version, provider, metadata, download, user and search",
  async (f) => {
    const alice = await createUser(f, "alice");
    const bob = await createUser(f, "bob");
    const carol = await createUser(f, "carol");
    await createOrg(f, "acme", [{ username: "carol", role: "member" }]);
    await hostedBox(f, alice, data(1000), true);
    await publishExternal(f, carol, "acme/secret", "1.0.0", { isPrivate: true });
    const paths = [
      "/api/v1/box/alice/devbox",
      "/api/v1/box/alice/devbox/version/1.0.0",
      "/api/v1/box/alice/devbox/version/1.0.0/provider/virtualbox",
      "/alice/devbox",
      DL,
    ];
    for (const token of [undefined, bob]) {
      for (const path of paths) {
        const r = await f.api.get(path, token ? { token } : {});
        assertEquals(r.status, 404, `${path} ${token ? "bob" : "anonymous"}`);
        assertEquals(r.body, { errors: ["Resource not found!"], success: false });
      }
      const user = await f.api.get("/api/v1/user/alice", token ? { token } : {});
      assertEquals(user.body.boxes, []);
      const search = await f.api.get("/api/v1/search", token ? { token } : {});
      assertEquals(search.body.boxes, []);
    }
    for (const path of paths.slice(0, -1)) {
      assertEquals((await f.api.get(path, { token: alice })).status, 200, path);
    }
    assertEquals((await f.api.get(DL, { token: alice })).status, testDownloadsRedirect ? 302 : 200);
    const meta = await f.api.get("/alice/devbox", { token: alice });
    assertEquals(meta.headers.get("Cache-Control"), "private, no-store");
    assertEquals((await f.api.get(`/alice/devbox?access_token=${alice}`)).status, 200);
    assertEquals((await f.api.get("/api/v1/search", { token: alice })).body.boxes.length, 1);
    assertEquals((await f.api.get("/api/v1/search", { token: f.admin })).body.boxes.length, 2);
    const members = await f.api.get("/api/v1/search?q=secret", { token: carol });
    assertEquals(members.body.boxes.map((b: { tag: string }) => b.tag), ["acme/secret"]);
    assertEquals((await f.api.get("/api/v1/user/acme", { token: carol })).body.boxes.length, 1);
    assertEquals((await f.api.get("/api/v1/user/acme", { token: bob })).body.boxes.length, 0);
    assertEquals((await f.api.get("/acme/secret", { token: carol })).status, 200);
  },
);

Deno.test("emitted URLs use WHARF_PUBLIC_URL, else the Host the client used", async () => {
  await withStarted(() => startRegistry({ WHARF_PUBLIC_URL: "https://boxes.example.com" }), async (f) => {
    const alice = await createUser(f, "alice");
    await publishExternal(f, alice, "alice/devbox");
    const meta = await f.api.get("/alice/devbox");
    assertEquals(meta.body.versions[0].providers[0].url, `https://boxes.example.com${DL}`);
    const box = await f.api.get("/api/v1/box/alice/devbox");
    assertEquals(
      box.body.versions[0].release_url,
      "https://boxes.example.com/api/v1/box/alice/devbox/version/1.0.0/release",
    );
  });
  await withStarted(startRegistry, async (g) => {
    const alice = await createUser(g, "alice");
    await publishExternal(g, alice, "alice/devbox");
    const proxied = await g.api.get("/alice/devbox", { headers: { "X-Forwarded-Host": "evil.example.com" } });
    assertEquals(proxied.body.versions[0].providers[0].url, g.srv.url + DL);
  });
});
