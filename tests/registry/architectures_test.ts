// Providers per architecture over HTTP (docs/registry.md#vagrant-24, #events): the default flag moves at create,
// update, rename and delete with a ProviderUpdated for each provider it leaves or reaches; (name, architecture)
// identity; the 422 texts; v1 paths address each name's default; provider event keys end with the architecture.

import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, registryTest } from "./helpers.ts";
import { boxWithVersion, createV2, defaults, providerEvents, URL_A, V1, V2 } from "./arch_helpers.ts";

const INVALID =
  "Architecture must be one of amd64, i386, arm, arm64, ppc64le, ppc64, mips64le, mips64, mipsle, " +
  "mips, s390x, unknown";
const PAIR_TAKEN = "Metadata provider must be unique for version and architecture";

registryTest(
  "the default architecture: first gets it, true takes it over, false and delete pass it on",
  async (f) => {
    const alice = await createUser(f, "alice");
    await boxWithVersion(f, alice);
    // The CLI sends default_architecture:false by default: the first of a name still gets the flag.
    const first = await createV2(f, alice, "virtualbox", {
      architecture: "amd64",
      default_architecture: false,
      url: URL_A,
    });
    assertEquals([first.body.architecture, first.body.default_architecture], ["amd64", true]);
    await createV2(f, alice, "virtualbox", { architecture: "arm64", url: URL_A });
    await createV2(f, alice, "libvirt", { architecture: "arm64", default_architecture: false });
    assertEquals(await defaults(f, alice), {
      "virtualbox/amd64": true,
      "virtualbox/arm64": false,
      "libvirt/arm64": true,
    });
    // true takes the flag over; the previous default loses it in the same commit.
    const taken = await createV2(f, alice, "virtualbox", {
      architecture: "i386",
      default_architecture: true,
    });
    assertEquals(taken.body.default_architecture, true);
    assertEquals(await defaults(f, alice), {
      "virtualbox/amd64": false,
      "virtualbox/arm64": false,
      "libvirt/arm64": true,
      "virtualbox/i386": true,
    });
    // false on the default passes it to the oldest other one of its name.
    const off = await f.api.put(`${V2}/provider/virtualbox/i386`, {
      provider: { default_architecture: false },
    }, {
      token: alice,
    });
    assertEquals([off.status, off.body.default_architecture], [200, false], off.text);
    assertEquals((await defaults(f, alice))["virtualbox/amd64"], true);
    // false on the only provider of its name leaves it true.
    const alone = await f.api.put(`${V2}/provider/libvirt/arm64`, { default_architecture: false }, {
      token: alice,
    });
    assertEquals(alone.body.default_architecture, true);
    // An update with true takes it back; deleting the default passes it to the oldest remaining one.
    await f.api.put(`${V2}/provider/virtualbox/arm64`, { provider: { default_architecture: true } }, {
      token: alice,
    });
    assertEquals((await defaults(f, alice))["virtualbox/arm64"], true);
    const gone = await f.api.delete(`${V2}/provider/virtualbox/arm64`, { token: alice });
    assertEquals([gone.status, gone.body.architecture], [200, "arm64"]);
    assertEquals(await defaults(f, alice), {
      "virtualbox/amd64": true,
      "libvirt/arm64": true,
      "virtualbox/i386": false,
    });
    const { keys, payloads } = await providerEvents(f);
    const tag = "alice/devbox/1.0.0";
    assertEquals(keys, [
      ["ProviderCreated", `${tag}/virtualbox/amd64`],
      ["ProviderCreated", `${tag}/virtualbox/arm64`],
      ["ProviderCreated", `${tag}/libvirt/arm64`],
      ["ProviderCreated", `${tag}/virtualbox/i386`],
      ["ProviderUpdated", `${tag}/virtualbox/amd64`],
      ["ProviderUpdated", `${tag}/virtualbox/i386`],
      ["ProviderUpdated", `${tag}/virtualbox/amd64`],
      ["ProviderUpdated", `${tag}/libvirt/arm64`],
      ["ProviderUpdated", `${tag}/virtualbox/arm64`],
      ["ProviderUpdated", `${tag}/virtualbox/amd64`],
      ["ProviderDeleted", `${tag}/virtualbox/arm64`],
      ["ProviderUpdated", `${tag}/virtualbox/amd64`],
    ]);
    // Payloads are the v2 Provider JSON, with the flag as committed.
    assertEquals(payloads.map((p) => p.default_architecture), [
      true,
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      true,
      false,
      true,
      true,
    ]);
    assert(payloads.every((p) => String(p.download_url).endsWith(`/${p.architecture}/vagrant.box`)));
  },
);

registryTest(
  "renames and architecture moves keep (name, architecture) unique and one default per name",
  async (f) => {
    const alice = await createUser(f, "alice");
    await boxWithVersion(f, alice);
    await createV2(f, alice, "virtualbox", { architecture: "amd64" });
    await createV2(f, alice, "virtualbox", { architecture: "arm64" });
    await createV2(f, alice, "libvirt", { architecture: "amd64" });
    const dup = await createV2(f, alice, "virtualbox", { architecture: "arm64" }, 422);
    assertEquals(dup.body.errors, [PAIR_TAKEN]);
    const moveOnto = await f.api.put(`${V2}/provider/virtualbox/arm64`, { architecture: "amd64" }, {
      token: alice,
    });
    assertEquals([moveOnto.status, moveOnto.body.errors], [422, [PAIR_TAKEN]]);
    // A move to a free architecture: same name, it keeps its (non-)default flag.
    const moved = await f.api.put(`${V2}/provider/virtualbox/arm64`, { architecture: "s390x" }, {
      token: alice,
    });
    assertEquals([moved.body.architecture, moved.body.default_architecture], ["s390x", false]);
    assertEquals((await f.api.get(`${V2}/provider/virtualbox/arm64`)).status, 404);
    // Renaming the default into a name that has one: it arrives without the flag, its old name passes it on.
    const renamed = await f.api.put(`${V2}/provider/virtualbox/amd64`, {
      name: "libvirt",
      architecture: "arm64",
    }, {
      token: alice,
    });
    assertEquals([renamed.status, renamed.body.default_architecture], [200, false], renamed.text);
    assertEquals(await defaults(f, alice), {
      "libvirt/arm64": false,
      "virtualbox/s390x": true,
      "libvirt/amd64": true,
    });
    // Renaming into a new name: the only one of that name, so the default.
    const fresh = await f.api.put(`${V2}/provider/libvirt/arm64`, { name: "qemu" }, { token: alice });
    assertEquals([fresh.body.name, fresh.body.default_architecture], ["qemu", true]);
    // The same pair on another version is free.
    await f.api.post("/api/v1/box/alice/devbox/versions", { version: "2.0.0" }, { token: alice });
    const other = await f.api.post("/api/v2/box/alice/devbox/version/2.0.0/providers", {
      name: "qemu",
      architecture: "arm64",
    }, { token: alice });
    assertEquals(other.status, 200, other.text);
  },
);

registryTest(
  "architecture values: absent is unknown, anything else is a 422 with the documented text",
  async (f) => {
    const alice = await createUser(f, "alice");
    await boxWithVersion(f, alice);
    const none = await createV2(f, alice, "virtualbox");
    assertEquals([none.body.architecture, none.body.default_architecture], ["unknown", true]);
    for (const bad of ["x86_64", "AMD64", "", 64, true, ["amd64"]]) {
      const r = await createV2(f, alice, "libvirt", { architecture: bad }, 422);
      assertEquals(r.body.errors, [INVALID], JSON.stringify(bad));
    }
    const both = await createV2(f, alice, "BAD", { architecture: "x", default_architecture: "maybe" }, 422);
    assertEquals(both.body.errors.length, 3);
    const badPut = await f.api.put(`${V2}/provider/virtualbox/unknown`, { architecture: "sparc" }, {
      token: alice,
    });
    assertEquals([badPut.status, badPut.body.errors], [422, [INVALID]]);
    // A path naming an architecture that does not exist is simply not found.
    assertEquals((await f.api.get(`${V2}/provider/virtualbox/sparc`, { token: alice })).status, 404);
    assertEquals((await f.api.get(`${V2}/provider/virtualbox/amd64`, { token: alice })).status, 404);
    const search = await f.api.get("/api/v1/search?architecture=sparc");
    assertEquals([search.status, search.body.errors], [422, [INVALID]]);
    // Every architecture the 422 text lists is accepted ("unknown" is the one the provider already has).
    const listed = INVALID.slice("Architecture must be one of ".length).split(", ");
    assertEquals(listed.length, 12);
    for (const a of listed.filter((a) => a !== "unknown")) {
      await createV2(f, alice, "virtualbox", { architecture: a });
    }
    assertEquals(Object.keys(await defaults(f, alice)).length, 12);
  },
);

registryTest("v1 provider paths address each name's default architecture", async (f) => {
  const alice = await createUser(f, "alice");
  await boxWithVersion(f, alice);
  await createV2(f, alice, "virtualbox", { architecture: "amd64", url: URL_A });
  await createV2(f, alice, "virtualbox", { architecture: "arm64", default_architecture: true, url: URL_A });
  // v1 create: the name exists in some architecture → v1's 422.
  const dup = await f.api.post(`${V1}/providers`, { provider: { name: "virtualbox" } }, { token: alice });
  assertEquals([dup.status, dup.body.errors], [422, ["Metadata provider must be unique for version"]]);
  // v1 GET shows the default (arm64), without architecture keys.
  const read = await f.api.get(`${V1}/provider/virtualbox`, { token: alice });
  assertEquals(read.status, 200);
  assert(!("architecture" in read.body) && !("default_architecture" in read.body), read.text);
  assertEquals(
    read.body.download_url,
    `${f.srv.url}/alice/boxes/devbox/versions/1.0.0/providers/virtualbox.box`,
  );
  // v1 PUT changes the default only.
  const url = "https://files.example.com/v1-put.box";
  assertEquals((await f.api.put(`${V1}/provider/virtualbox`, { url }, { token: alice })).status, 200);
  const v2 = (await f.api.get(V2, { token: alice })).body.providers;
  assertEquals(v2.map((p: { architecture: string; url: string }) => [p.architecture, p.url]), [
    ["amd64", URL_A],
    ["arm64", url],
  ]);
  // A v1 create of a new name: unknown and default; v1 rename into a taken name → v1's 422.
  const lib = await f.api.post(`${V1}/providers`, { name: "libvirt", architecture: "arm64" }, {
    token: alice,
  });
  assertEquals(lib.status, 200);
  assert(!("architecture" in lib.body));
  const taken = await f.api.put(`${V1}/provider/libvirt`, { name: "virtualbox" }, { token: alice });
  assertEquals(taken.body.errors, ["Metadata provider must be unique for version"]);
  // v1 DELETE deletes the default (arm64); the flag passes to amd64, which v1 then addresses.
  const del = await f.api.delete(`${V1}/provider/virtualbox`, { token: alice });
  assertEquals(del.status, 200);
  assertEquals(await defaults(f, alice), { "virtualbox/amd64": true, "libvirt/unknown": true });
  assertEquals((await f.api.get(`${V1}/provider/virtualbox`, { token: alice })).body.url, URL_A);
  const { keys } = await providerEvents(f);
  assertEquals(keys.slice(-2), [
    ["ProviderDeleted", "alice/devbox/1.0.0/virtualbox/arm64"],
    ["ProviderUpdated", "alice/devbox/1.0.0/virtualbox/amd64"],
  ]);
});

registryTest(
  "a version releases with a valid provider of any architecture; the last valid one stays",
  async (f) => {
    const alice = await createUser(f, "alice");
    await boxWithVersion(f, alice);
    await createV2(f, alice, "virtualbox", { architecture: "amd64" });
    await createV2(f, alice, "virtualbox", { architecture: "arm64", url: URL_A });
    const release = await f.api.put(`${V2}/release`, undefined, { token: alice });
    assertEquals([release.status, release.body.status], [200, "active"], release.text);
    assertEquals(release.body.release_url, `${f.srv.url}${V2}/release`);
    const last = await f.api.delete(`${V2}/provider/virtualbox/arm64`, { token: alice });
    assertEquals(last.status, 422);
    // v1 shows the default (amd64, not valid): the version lists it; metadata of the root URL has no entry.
    const meta = await f.api.get("/alice/devbox");
    assertEquals(meta.body.versions[0].providers, []);
    const meta2 = await f.api.get("/api/v2/vagrant/alice/devbox");
    assertEquals(meta2.body.versions[0].providers.map((p: { architecture: string }) => p.architecture), [
      "arm64",
    ]);
  },
);
