// The admin-only box history API (what `wharf registry import` carries): imported download counts and
// creation/update times of a box, its versions and providers.

import { assertEquals } from "../helpers/assert.ts";
import { createUser, registryTest } from "./helpers.ts";
import { addProvider, addVersion, setStatus } from "./import_helpers.ts";
import { loggedEvents } from "../helpers/stored.ts";

const HISTORY = "/api/v2/admin/boxes/alice/devbox/history";

registryTest("the history API sets imported counts and times for admins only", async (f) => {
  const alice = await createUser(f, "alice");
  const box = await f.api.post("/api/v1/boxes", { name: "devbox", is_private: false }, { token: alice });
  assertEquals(box.status, 200, box.text);
  await addVersion(f, alice, "alice/devbox", "1.0.0", "one");
  await addProvider(f, alice, "alice/devbox", "1.0.0", {
    name: "virtualbox",
    architecture: "arm64",
    url: "https://files.example.com/a.box",
  });
  await setStatus(f, alice, "alice/devbox", "1.0.0", "release");
  assertEquals((await f.api.get(HISTORY, { token: alice })).status, 403);
  assertEquals((await f.api.put(HISTORY, { downloads_imported: 5 }, { token: alice })).status, 403);
  assertEquals((await f.api.get(HISTORY)).status, 401);
  assertEquals((await f.api.get("/api/v1/admin/boxes/alice/nope/history", { token: f.admin })).status, 404);

  const t = (s: string) => `2019-01-0${s}T00:00:00.000Z`;
  const put = await f.api.put(HISTORY, {
    downloads_imported: 41,
    created_at: t("1"),
    updated_at: "2019-01-09T10:00:00Z",
    versions: [{
      version: "1.0.0",
      created_at: t("2"),
      updated_at: t("3"),
      providers: [{ name: "virtualbox", architecture: "arm64", created_at: t("4"), updated_at: t("5") }],
    }],
  }, { token: f.admin });
  assertEquals(put.status, 200, put.text);
  assertEquals(put.body, {
    tag: "alice/devbox",
    downloads: 41,
    downloads_imported: 41,
    created_at: t("1"),
    updated_at: "2019-01-09T10:00:00.000Z",
    versions: [{
      version: "1.0.0",
      created_at: t("2"),
      updated_at: t("3"),
      providers: [{ name: "virtualbox", architecture: "arm64", created_at: t("4"), updated_at: t("5") }],
    }],
  });
  await fetch(`${f.srv.url}/alice/boxes/devbox/versions/1.0.0/providers/virtualbox/arm64/vagrant.box`, {
    redirect: "manual",
  }).then((r) => r.body?.cancel());
  const shown = await f.api.get("/api/v2/box/alice/devbox", { token: alice });
  assertEquals([shown.body.downloads, shown.body.created_at], [42, t("1")]);
  assertEquals(shown.body.versions[0].providers[0].created_at, t("4"));
  const events = (await loggedEvents(f.srv)).filter((e) => e.Type === "BoxUpdated");
  assertEquals(events.length, 1);

  const bad = await f.api.put(HISTORY, {
    downloads_imported: -1,
    created_at: "yesterday",
    versions: [{ version: "2.0.0" }],
  }, { token: f.admin });
  assertEquals(bad.status, 422);
  assertEquals(bad.body.errors, [
    "Downloads imported must be a whole number, 0 or more",
    "Box created_at must be an ISO 8601 time",
  ]);
  const missing = await f.api.put(HISTORY, {
    versions: [{ version: "2.0.0" }, {
      version: "1.0.0",
      providers: [{ name: "libvirt", architecture: "amd64" }],
    }],
  }, { token: f.admin });
  assertEquals(missing.body.errors, [
    "Version 2.0.0 does not exist",
    "Provider libvirt/amd64 of version 1.0.0 does not exist",
  ]);
  const cleared = await f.api.put(HISTORY, { downloads_imported: null }, { token: f.admin });
  assertEquals([cleared.body.downloads, cleared.body.downloads_imported], [1, null]);
});
