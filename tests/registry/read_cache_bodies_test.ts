// The whole-body caches of the hot reads (box JSON, metadata, search pages): every write through the API shows in
// the very next read, download counts stay live, and a cached body is never served to another viewer, origin
// or spelling of the name than the one it was built for.

import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, type Fixture, publishExternal, registryTest } from "./helpers.ts";

const SEARCH = "/api/v1/search?q=bytebox&sort=updated&order=desc&page=1&limit=10";
const BOX = "/api/v1/box/alice/bytebox";
const METADATA = "/alice/bytebox";

/** A GET with the given Host header over a raw connection (fetch always sends the URL's host). */
// deno-lint-ignore no-explicit-any
async function getWithHost(f: Fixture, path: string, host: string): Promise<any> {
  const url = new URL(f.api.url);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  try {
    await conn.write(
      new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    const raw = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    const [head = "", body = ""] = raw.split("\r\n\r\n", 2);
    assert(head.startsWith("HTTP/1.1 200"), head);
    assert(/content-length:/i.test(head), head);
    return JSON.parse(body);
  } catch (err) {
    conn.close();
    throw err;
  }
}

/** Reads the three cached views twice, so the next read after a write would come from a cache. */
async function warm(f: Fixture, token?: string): Promise<void> {
  const options = token ? { token } : {};
  for (let i = 0; i < 2; i++) {
    for (const path of [BOX, METADATA, SEARCH]) {
      assertEquals((await f.api.get(path, options)).status, 200, path);
    }
  }
}

registryTest(
  "box JSON, metadata and search show description, version and provider updates in the next read",
  async (f) => {
    const alice = await createUser(f, "alice");
    await publishExternal(f, alice, "alice/bytebox");
    await warm(f);

    const box = await f.api.put(BOX, { box: { description: "# New text", is_private: false } }, {
      token: alice,
    });
    assertEquals(box.status, 200, box.text);
    assertEquals((await f.api.get(BOX)).body.description, "# New text");
    assertEquals((await f.api.get(METADATA)).body.description, "# New text");
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].description_html, "<h1>New text</h1>\n");
    await warm(f);

    const version = await f.api.put(`${BOX}/version/1.0.0`, { version: { description: "notes" } }, {
      token: alice,
    });
    assertEquals(version.status, 200, version.text);
    assertEquals((await f.api.get(BOX)).body.current_version.description, "notes");
    assertEquals((await f.api.get(METADATA)).body.versions[0].description_markdown, "notes");
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].current_version.description, "notes");
    await warm(f);

    const moved = "https://mirror.example.com/bytebox.box";
    const provider = await f.api.put(
      `${BOX}/version/1.0.0/provider/virtualbox`,
      { provider: { url: moved } },
      {
        token: alice,
      },
    );
    assertEquals(provider.status, 200, provider.text);
    assertEquals((await f.api.get(BOX)).body.versions[0].providers[0].url, moved);
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].current_version.providers[0].original_url, moved);
    // Metadata points vagrant at wharf's download URL, which redirects to the new external URL.
    const metadata = (await f.api.get(METADATA)).body;
    const download = await f.api.get(new URL(metadata.versions[0].providers[0].url).pathname);
    assertEquals(download.headers.get("Location"), moved);
    await warm(f);

    // A second provider and a newer release replace what the caches held.
    await publishExternal(f, alice, "alice/bytebox", "1.1.0", { provider: "libvirt" });
    assertEquals((await f.api.get(BOX)).body.current_version.version, "1.1.0");
    assertEquals((await f.api.get(METADATA)).body.versions[0].providers[0].name, "libvirt");
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].current_version.version, "1.1.0");
    await warm(f);

    // Revoked: gone from the anonymous views at once, the older release is current again.
    const revoke = await f.api.put(`${BOX}/version/1.1.0/revoke`, undefined, { token: alice });
    assertEquals(revoke.status, 200, revoke.text);
    assertEquals((await f.api.get(BOX)).body.current_version.version, "1.0.0");
    assertEquals((await f.api.get(BOX)).body.versions.length, 1);
    assertEquals((await f.api.get(METADATA)).body.versions.length, 1);
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].current_version.version, "1.0.0");
  },
);

registryTest("cached box JSON and search pages show every counted download, and /user too", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/bytebox");
  await warm(f);
  for (let n = 1; n <= 3; n++) {
    const download = await f.api.get("/alice/boxes/bytebox/versions/1.0.0/providers/virtualbox.box");
    assertEquals(download.status, 302);
    assertEquals((await f.api.get(BOX)).body.downloads, n);
    assertEquals((await f.api.get(BOX, { token: alice })).body.downloads, n);
    assertEquals((await f.api.get("/api/v1/user/alice")).body.boxes[0].downloads, n);
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].downloads, n);
  }
  // A HEAD is not a download: the cached bytes stay as they are.
  const head = await f.api.call("HEAD", "/alice/boxes/bytebox/versions/1.0.0/providers/virtualbox.box");
  assertEquals(head.status, 302);
  assertEquals((await f.api.get(BOX)).body.downloads, 3);
});

registryTest(
  "a writer's cached box JSON with unreleased versions is never served to other callers",
  async (f) => {
    const alice = await createUser(f, "alice");
    const bob = await createUser(f, "bob");
    await publishExternal(f, alice, "alice/bytebox");
    const draft = await f.api.post(`${BOX}/versions`, { version: { version: "2.0.0" } }, { token: alice });
    assertEquals(draft.status, 200, draft.text);
    const versions = (a: { body: { versions: { version: string }[] } }) =>
      a.body.versions.map((v) => v.version);
    for (let i = 0; i < 2; i++) {
      assertEquals(versions(await f.api.get(BOX, { token: alice })), ["2.0.0", "1.0.0"]);
      assertEquals(versions(await f.api.get(BOX)), ["1.0.0"]);
      assertEquals(versions(await f.api.get(BOX, { token: bob })), ["1.0.0"]);
      assertEquals(versions(await f.api.get(`${BOX}?access_token=not-a-token`)), ["1.0.0"]);
    }
    // Made private: hidden from everyone else everywhere at once, still readable by its owner.
    await warm(f);
    const close = await f.api.put(BOX, { box: { is_private: true } }, { token: alice });
    assertEquals(close.status, 200, close.text);
    for (const options of [{}, { token: bob }]) {
      assertEquals((await f.api.get(BOX, options)).status, 404);
      assertEquals((await f.api.get(METADATA, options)).status, 404);
      assertEquals((await f.api.get(SEARCH, options)).body.boxes, []);
      assertEquals((await f.api.get("/api/v1/user/alice", options)).body.boxes, []);
    }
    assertEquals((await f.api.get(METADATA, { token: alice })).status, 200);
    assertEquals((await f.api.get(SEARCH, { token: alice })).body.boxes.length, 1);
  },
);

registryTest("cached metadata echoes each request's spelling of the name and each Host's URLs", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/bytebox");
  for (let i = 0; i < 2; i++) {
    assertEquals((await f.api.get(METADATA)).body.name, "alice/bytebox");
    assertEquals((await f.api.get("/ALICE/ByteBox")).body.name, "ALICE/ByteBox");
  }
  // Each spelling shows a write in its next read, whichever spelling was answered last.
  const put = await f.api.put(BOX, { box: { short_description: "renamed text", is_private: false } }, {
    token: alice,
  });
  assertEquals(put.status, 200, put.text);
  for (const path of ["/ALICE/ByteBox", METADATA, "/ALICE/ByteBox"]) {
    const metadata = (await f.api.get(path)).body;
    assertEquals([metadata.name, metadata.short_description], [path.slice(1), "renamed text"]);
  }
  const port = new URL(f.api.url).port;
  for (const host of [`127.0.0.1:${port}`, `registry.example.test:${port}`, `127.0.0.1:${port}`]) {
    for (let i = 0; i < 2; i++) {
      const metadata = await getWithHost(f, METADATA, host);
      assertEquals(new URL(metadata.versions[0].providers[0].url).host, host);
      const box = await getWithHost(f, BOX, host);
      assert(box.current_version.release_url.startsWith(`http://${host}/`), JSON.stringify(box));
      const search = await getWithHost(f, SEARCH, host);
      assert(
        search.boxes[0].current_version.revoke_url.startsWith(`http://${host}/`),
        JSON.stringify(search),
      );
    }
  }
});

registryTest("a repeated by-downloads search follows the new order once downloads are counted", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/bytebox-a");
  await publishExternal(f, alice, "alice/bytebox-b");
  const query = "/api/v1/search?q=bytebox-&sort=downloads&order=desc&limit=10";
  const first = async () => (await f.api.get(query)).body.boxes[0];
  for (let i = 0; i < 3; i++) assertEquals((await first()).downloads, 0);
  for (let i = 0; i < 2; i++) {
    const download = await f.api.get("/alice/boxes/bytebox-b/versions/1.0.0/providers/virtualbox.box");
    assertEquals(download.status, 302);
  }
  // The by-downloads order may lag the counts by up to a second; it must then follow them.
  const deadline = Date.now() + 10_000;
  let top = await first();
  while (top.tag !== "alice/bytebox-b" && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    top = await first();
  }
  assertEquals([top.tag, top.downloads], ["alice/bytebox-b", 2]);
});
