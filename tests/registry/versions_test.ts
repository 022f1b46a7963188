// Versions, providers, search and the Box events (docs/registry.md, docs/registry.md#events).

import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, publishExternal, registryTest } from "./helpers.ts";
import { loggedEvents, loggedLines } from "../helpers/stored.ts";

const B = "/api/v1/box/alice/devbox";

registryTest("version numbers follow RubyGems syntax and equality", async (f) => {
  const alice = await createUser(f, "alice");
  await f.api.post("/api/v1/boxes", { name: "devbox" }, { token: alice });
  const bad = await f.api.post(`${B}/versions`, { version: { version: "v1.0" } }, { token: alice });
  assertEquals(bad.status, 422);
  assertEquals(bad.body.errors, ["Version must be a valid version number (like 1.0.0)"]);
  for (const version of ["1.0.0-rc.1", "2026.03.04", "1.0.0"]) {
    const ok = await f.api.post(`${B}/versions`, { version: { version } }, { token: alice });
    assertEquals(ok.status, 200, version);
    assertEquals(ok.body.status, "unreleased");
    assertEquals(ok.body.number, version);
  }
  const same = await f.api.post(`${B}/versions`, { version: { version: "1.0" } }, { token: alice });
  assertEquals(same.body.errors, ["Version has already been taken"]);
  const box = await f.api.get(B, { token: alice });
  assertEquals(box.body.versions.map((v: { version: string }) => v.version), [
    "2026.03.04",
    "1.0.0",
    "1.0.0-rc.1",
  ]);
  const renamed = await f.api.put(`${B}/version/1.0.0-rc.1`, {
    version: { version: "0.9.0", description: "d" },
  }, {
    token: alice,
  });
  assertEquals(renamed.body.version, "0.9.0");
  assertEquals(renamed.body.description_markdown, "d");
});

registryTest("the version lifecycle allows each step only from its source state", async (f) => {
  const alice = await createUser(f, "alice");
  await f.api.post("/api/v1/boxes", { name: "devbox", is_private: false }, { token: alice });
  await f.api.post(`${B}/versions`, { version: { version: "1.0.0" } }, { token: alice });
  const V = `${B}/version/1.0.0`;
  const noProvider = await f.api.put(`${V}/release`, undefined, {
    token: alice,
    headers: { "Content-Type": "application/json" },
  });
  assertEquals(noProvider.body.errors, ["Version 1.0.0 has no valid provider"]);
  assertEquals((await f.api.put(`${V}/revoke`, undefined, { token: alice })).body.errors, [
    "Version 1.0.0 is not active and cannot be revoked",
  ]);
  assertEquals((await f.api.get(V)).status, 404);
  await f.api.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token: alice });
  assertEquals((await f.api.put(`${V}/release`, undefined, { token: alice })).status, 422);
  await f.api.put(`${V}/provider/virtualbox`, { provider: { url: "https://example.com/a.box" } }, {
    token: alice,
  });
  const released = await f.api.put(`${V}/release`, undefined, { token: alice });
  assertEquals(released.status, 200, released.text);
  assertEquals(released.body.status, "active");
  assertEquals((await f.api.put(`${V}/release`, undefined, { token: alice })).body.errors, [
    "Version 1.0.0 is already released",
  ]);
  const rename = await f.api.put(V, { version: { version: "1.0.1" } }, { token: alice });
  assertEquals(rename.body.errors, ["Version number can only be changed while unreleased"]);
  assertEquals((await f.api.delete(`${V}/provider/virtualbox`, { token: alice })).status, 422);
  assertEquals((await f.api.get(V)).status, 200);
  assertEquals((await f.api.put(`${V}/revoke`, undefined, { token: alice })).body.status, "revoked");
  assertEquals((await f.api.put(`${V}/release`, undefined, { token: alice })).body.errors, [
    "Version 1.0.0 is revoked and cannot be released again",
  ]);
  assertEquals((await f.api.post(`${V}/providers`, { name: "libvirt" }, { token: alice })).body.errors, [
    "Version 1.0.0 is revoked",
  ]);
  assertEquals((await f.api.put(V, { description: "gone" }, { token: alice })).status, 200);
  assertEquals((await f.api.delete(V, { token: alice })).body.status, "revoked");
  assertEquals((await f.api.get(V, { token: alice })).status, 404);
});

registryTest("current_version is the highest active version and moves on revoke", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox", "1.0.0");
  await publishExternal(f, alice, "alice/devbox", "1.10.0");
  await f.api.post(`${B}/versions`, { version: { version: "2.0.0" } }, { token: alice });
  assertEquals((await f.api.get(B)).body.current_version.version, "1.10.0");
  assertEquals((await f.api.get(B)).body.versions.map((v: { version: string }) => v.version), [
    "1.10.0",
    "1.0.0",
  ]);
  assertEquals((await f.api.get(B, { token: alice })).body.versions.length, 3);
  await f.api.put(`${B}/version/1.10.0/revoke`, undefined, { token: alice });
  assertEquals((await f.api.get(B)).body.current_version.version, "1.0.0");
  const meta = await f.api.get("/alice/devbox");
  assertEquals(meta.body.versions.map((v: { version: string }) => v.version), ["1.0.0"]);
});

registryTest("provider fields are validated with one message per problem", async (f) => {
  const alice = await createUser(f, "alice");
  await f.api.post("/api/v1/boxes", { name: "devbox" }, { token: alice });
  await f.api.post(`${B}/versions`, { version: { version: "1.0.0" } }, { token: alice });
  const V = `${B}/version/1.0.0`;
  const sum = "a".repeat(64);
  const created = await f.api.post(`${V}/providers`, {
    provider: { name: "virtualbox", checksum: sum.toUpperCase(), checksum_type: "SHA256" },
  }, {
    token: alice,
  });
  assertEquals(created.status, 200, created.text);
  assert(!("checksum" in created.body));
  const single = await f.api.get(`${V}/provider/virtualbox`, { token: alice });
  assertEquals([single.body.checksum, single.body.checksum_type], [sum, "sha256"]);
  assertEquals(single.body.hosted, false);
  assertEquals(single.body.hosted_token, null);
  const dup = await f.api.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token: alice });
  assertEquals(dup.body.errors, ["Metadata provider must be unique for version"]);
  const two = await f.api.post(`${V}/providers`, { provider: { name: "Bad Name", url: "ftp://x" } }, {
    token: alice,
  });
  assertEquals(two.status, 422);
  assertEquals(two.body.errors.length, 2);
  const half = await f.api.post(`${V}/providers`, { provider: { name: "libvirt", checksum: sum } }, {
    token: alice,
  });
  assertEquals(half.status, 422);
  const wrongLen = await f.api.post(`${V}/providers`, {
    provider: { name: "libvirt", checksum: sum, checksum_type: "md5" },
  }, {
    token: alice,
  });
  assertEquals(wrongLen.status, 422);
  // Clients send null for the checksum they never read: that keeps it; "" for both clears it.
  const keep = await f.api.put(`${V}/provider/virtualbox`, {
    provider: { name: "virtualbox", url: null, checksum: null, checksum_type: null },
  }, {
    token: alice,
  });
  assertEquals(keep.status, 200);
  assertEquals((await f.api.get(`${V}/provider/virtualbox`, { token: alice })).body.checksum, sum);
  const halfClear = await f.api.put(`${V}/provider/virtualbox`, { provider: { checksum_type: "" } }, {
    token: alice,
  });
  assertEquals(halfClear.body.errors, ["Checksum and checksum type must be given together"]);
  await f.api.put(`${V}/provider/virtualbox`, { checksum: "", checksum_type: "" }, { token: alice });
  assertEquals((await f.api.get(`${V}/provider/virtualbox`, { token: alice })).body.checksum, null);
  const url = await f.api.put(`${V}/provider/virtualbox`, {
    provider: { name: "vmware_desktop", url: "https://example.com/x.box" },
  }, {
    token: alice,
  });
  assertEquals([url.body.name, url.body.url, url.body.original_url], [
    "vmware_desktop",
    "https://example.com/x.box",
    "https://example.com/x.box",
  ]);
  const gone = await f.api.delete(`${V}/provider/vmware_desktop`, { token: alice });
  assertEquals(gone.body.name, "vmware_desktop");
});

registryTest("search returns exactly boxes with a current version, filtered, sorted and paged", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox");
  await publishExternal(f, alice, "alice/other", "1.0.0", { provider: "libvirt" });
  await f.api.post("/api/v1/boxes", { name: "empty", is_private: false }, { token: alice });
  await f.api.get("/alice/boxes/other/versions/1.0.0/providers/libvirt.box");
  const all = await f.api.get("/api/v1/search");
  assertEquals(Object.keys(all.body), ["boxes"]);
  assertEquals(all.body.boxes.map((b: { tag: string }) => b.tag), ["alice/other", "alice/devbox"]);
  assert(
    all.body.boxes.every((b: Record<string, unknown>) => Object.keys(b).length === 12 && !("versions" in b)),
  );
  const q = await f.api.get("/api/v1/search?q=%20DEV%20");
  assertEquals(q.body.boxes.map((b: { tag: string }) => b.tag), ["alice/devbox"]);
  const p = await f.api.get("/api/v1/search?provider=libvirt");
  assertEquals(p.body.boxes.map((b: { tag: string }) => b.tag), ["alice/other"]);
  const asc = await f.api.get("/api/v1/search?sort=created&order=asc&limit=1&page=2");
  assertEquals(asc.body.boxes.map((b: { tag: string }) => b.tag), ["alice/other"]);
  assertEquals((await f.api.get("/api/v1/search?page=9")).body, { boxes: [] });
  assertEquals((await f.api.get("/api/v1/search?limit=500")).status, 200);
  const bad = await f.api.get("/api/v1/search?sort=x&order=up&limit=0&page=a");
  assertEquals(bad.status, 422);
  assertEquals(bad.body.errors.length, 4);
});

registryTest("every mutation emits one Box event with its key, and no secret reaches the log", async (f) => {
  const alice = await createUser(f, "alice");
  await publishExternal(f, alice, "alice/devbox");
  await f.api.put(B, { name: "devbox2", is_private: false }, { token: alice });
  await f.api.delete("/api/v1/box/alice/devbox2", { token: alice });
  const events = (await loggedEvents(f.srv)).filter((e) => e.Topic === "Box");
  assertEquals(events.map((e) => [e.Type, e.Key, e.FilterKeys]), [
    ["BoxCreated", "alice/devbox", null],
    ["VersionCreated", "alice/devbox/1.0.0", ["alice/devbox"]],
    // docs/registry.md#events: the provider's architecture ends the key.
    ["ProviderCreated", "alice/devbox/1.0.0/virtualbox/unknown", ["alice/devbox", "alice/devbox/1.0.0"]],
    ["VersionReleased", "alice/devbox/1.0.0", ["alice/devbox"]],
    ["BoxUpdated", "alice/devbox2", null],
    ["BoxDeleted", "alice/devbox2", null],
  ]);
  const updated = events[4]!.Payload as Record<string, unknown>;
  assertEquals(updated.previous_tag, "alice/devbox");
  assertEquals(updated.actor, "alice");
  assert(!("versions" in (updated.Box as Record<string, unknown>)));
  const log = (await loggedLines(f.srv)).join("\n");
  assert(log.includes("alice/devbox2"));
  assert(!log.includes(alice.slice(6)) && !log.includes("alice-password"));
  // Stream payloads carry no e-mail (the log's recovery Docs may).
  assert(!JSON.stringify(events).includes("alice@example.com"));
});
