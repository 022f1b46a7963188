// The cached read paths (box JSON, metadata, search pages): fresh after every change, never showing a
// private box to a caller who may not see it, and still echoing X-Request-Id and honouring ?access_token.

import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, publishExternal, registryTest } from "./helpers.ts";

const SEARCH = "/api/v1/search?q=cachebox&sort=downloads&order=desc&page=1&limit=10";

registryTest("cached box JSON, metadata and search pages change right after an update", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/cachebox");
  // Read each twice so the second answer comes from the caches.
  for (let i = 0; i < 2; i++) {
    assertEquals((await f.api.get("/api/v1/box/alice/cachebox")).body.short_description, null);
    assertEquals((await f.api.get("/alice/cachebox")).body.short_description, null);
    assertEquals((await f.api.get(SEARCH)).body.boxes[0].short_description, null);
  }
  const put = await f.api.put("/api/v1/box/alice/cachebox", {
    box: { short_description: "fresh", is_private: false },
  }, {
    token: alice,
  });
  assertEquals(put.status, 200, put.text);
  const freshBox = await f.api.get("/api/v1/box/alice/cachebox");
  assertEquals(freshBox.body?.short_description, "fresh", freshBox.text);
  const fresh = await f.api.get("/alice/cachebox");
  assertEquals(fresh.body?.short_description, "fresh", fresh.text);
  assertEquals((await f.api.get(SEARCH)).body.boxes[0].short_description, "fresh");

  // A new release shows up in the metadata and as the current version at once.
  await publishExternal(f, alice, "alice/cachebox", "2.0.0");
  const metadata = await f.api.get("/alice/cachebox");
  assertEquals(metadata.body.versions.map((v: { version: string }) => v.version), ["2.0.0", "1.0.0"]);
  assertEquals((await f.api.get(SEARCH)).body.boxes[0].current_version.version, "2.0.0");

  // A counted download moves the count shown by box JSON and by a cached search page.
  const download = await f.api.get("/alice/boxes/cachebox/versions/2.0.0/providers/virtualbox.box");
  assertEquals(download.status, 302);
  assertEquals((await f.api.get("/api/v1/box/alice/cachebox")).body.downloads, 1);
  assertEquals((await f.api.get(SEARCH)).body.boxes[0].downloads, 1);

  // Deleted: gone everywhere.
  assertEquals((await f.api.delete("/api/v1/box/alice/cachebox", { token: alice })).status, 200);
  assertEquals((await f.api.get("/api/v1/box/alice/cachebox")).status, 404);
  assertEquals((await f.api.get("/alice/cachebox")).status, 404);
  assertEquals((await f.api.get(SEARCH)).body.boxes, []);
});

registryTest("private boxes read by their owner are never served from a cache to others", async (f) => {
  const alice = await createUser(f, "alice");
  const bob = await createUser(f, "bob");
  await publishExternal(f, alice, "alice/cachebox-public");
  await publishExternal(f, alice, "alice/cachebox-secret", "1.0.0", { isPrivate: true });
  const tags = (r: { body: { boxes: { tag: string }[] } }) => r.body.boxes.map((b) => b.tag);
  for (let i = 0; i < 2; i++) {
    assertEquals(tags(await f.api.get(SEARCH, { token: alice })), [
      "alice/cachebox-public",
      "alice/cachebox-secret",
    ]);
    assertEquals((await f.api.get("/alice/cachebox-secret", { token: alice })).status, 200);
    assertEquals((await f.api.get("/api/v1/box/alice/cachebox-secret", { token: alice })).status, 200);
  }
  for (const token of [undefined, bob]) {
    const options = token ? { token } : {};
    assertEquals(tags(await f.api.get(SEARCH, options)), ["alice/cachebox-public"]);
    assertEquals((await f.api.get("/alice/cachebox-secret", options)).status, 404);
    assertEquals((await f.api.get("/api/v1/box/alice/cachebox-secret", options)).status, 404);
  }
  // Made public: visible to everyone at once; made private again: hidden again.
  const open = await f.api.put("/api/v1/box/alice/cachebox-secret", { box: { is_private: false } }, {
    token: alice,
  });
  assertEquals(open.status, 200, open.text);
  assertEquals(tags(await f.api.get(SEARCH)).length, 2);
  assertEquals((await f.api.get("/alice/cachebox-secret")).status, 200);
  const close = await f.api.put("/api/v1/box/alice/cachebox-secret", { box: { is_private: true } }, {
    token: alice,
  });
  assertEquals(close.status, 200, close.text);
  assertEquals(tags(await f.api.get(SEARCH)), ["alice/cachebox-public"]);
  assertEquals((await f.api.get("/alice/cachebox-secret")).status, 404);
  assertEquals((await f.api.get("/api/v1/box/alice/cachebox-secret", { token: bob })).status, 404);
});

registryTest(
  "hot read routes echo X-Request-Id and accept ?access_token, also percent-encoded",
  async (f) => {
    const alice = await createUser(f, "alice");
    await publishExternal(f, alice, "alice/cachebox", "1.0.0", { isPrivate: true });
    for (const path of ["/api/v1/box/alice/cachebox", "/alice/cachebox"]) {
      const plain = await f.api.get(`${path}?access_token=${alice}`, { headers: { "X-Request-Id": "r-1" } });
      assertEquals(plain.status, 200, path);
      assertEquals(plain.headers.get("X-Request-Id"), "r-1");
      assertEquals(plain.headers.get("Content-Type"), "application/json");
      const encoded = await f.api.get(`${path}?access%5Ftoken=${alice}`);
      assertEquals(encoded.status, 200, path);
      const missing = await f.api.get(path, { headers: { "X-Request-Id": "r-2" } });
      assertEquals(missing.status, 404);
      assertEquals(missing.headers.get("X-Request-Id"), "r-2");
      const head = await f.api.call("HEAD", `${path}?access_token=${alice}`);
      assertEquals(head.status, 200);
      assert(head.headers.get("X-Request-Id"));
      assertEquals(head.text, "");
    }
    const metadata = await f.api.get(`/alice/cachebox?access_token=${alice}`);
    assertEquals(metadata.headers.get("Cache-Control"), "private, no-store");
  },
);
