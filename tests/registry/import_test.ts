// `wharf registry import` from one wharf into another: everything arrives as the source shows it, a second
// run copies nothing, a bad file is reported while the rest arrives, and a v1-only source goes through v1.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startRegistry } from "./helpers.ts";
import { boxView, download, importer, sourceOrg } from "./import_helpers.ts";

const TAGS = ["acme/devbox", "acme/secret"];

Deno.test("an organization imported from a wharf answers the same, files, privacy, counts and times included", async () => {
  const src = await startRegistry();
  const dst = await startRegistry();
  try {
    const org = await sourceOrg(src);
    const before = Object.fromEntries(
      await Promise.all(TAGS.map(async (t) => [t, await boxView(src.srv.url, org.token, t)])),
    );
    assertEquals((before["acme/devbox"] as { downloads: number }).downloads, 3);
    const a = await dst.api.post("/api/v1/admin/organizations", { organization: { name: "acme" } }, {
      token: dst.admin,
    });
    assertEquals(a.status, 200, a.text);
    const args = [
      "--from",
      src.srv.url,
      "--namespace",
      "acme",
      "--server",
      dst.srv.url,
      "--token",
      dst.admin,
    ];
    const dry = await importer([...args, "--dry-run", "--json"], { VAGRANT_CLOUD_TOKEN: org.token });
    assertEquals(dry.code, 0, dry.out + dry.err);
    const planned = JSON.parse(dry.out);
    assertEquals(planned.would_copy.files, org.files.size);
    assertEquals(planned.would_copy.bytes, [...org.files.values()].reduce((n, b) => n + b.byteLength, 0));
    assertEquals((await dst.api.get("/api/v2/box/acme/devbox", { token: dst.admin })).status, 404);

    const run = await importer(args, { VAGRANT_CLOUD_TOKEN: org.token });
    assertEquals(run.code, 0, run.out + run.err);
    assertStringIncludes(run.out, `${org.files.size} files copied`);
    assertStringIncludes(run.out, "boxes: 2 created, 0 updated, 0 unchanged");
    assert(!run.out.includes(org.token) && !run.err.includes(org.token), "the source token is never printed");
    for (const tag of TAGS) {
      assertEquals(await boxView(dst.srv.url, dst.admin, tag), before[tag], tag);
    }
    assertEquals((await boxView(dst.srv.url, undefined, "acme/secret")).status, 404);
    const external = await fetch(
      `${dst.srv.url}/acme/boxes/devbox/versions/1.1.0/providers/libvirt/amd64/vagrant.box`,
      {
        method: "HEAD",
        redirect: "manual",
      },
    );
    await external.body?.cancel();
    assertEquals(external.headers.get("location"), "https://files.example.com/devbox-1.1.0-libvirt.box");

    const again = await importer([...args, "--json"], { VAGRANT_CLOUD_TOKEN: org.token });
    assertEquals(again.code, 0, again.out + again.err);
    const second = JSON.parse(again.out);
    assertEquals(second.files.copied, 0);
    assertEquals(second.boxes, { created: 0, updated: 0, unchanged: 2 });
    assertEquals([second.versions, second.providers], [
      { created: 0, updated: 0, released: 0, revoked: 0 },
      { created: 0, updated: 0 },
    ]);
    for (const tag of TAGS) assertEquals(await boxView(dst.srv.url, dst.admin, tag), before[tag], tag);
    const plain = await importer(args, { VAGRANT_CLOUD_TOKEN: org.token });
    assertStringIncludes(plain.out, "0 files copied");
    // Last: these downloads count on the target.
    for (const [key, file] of org.files) {
      const [tag, version, provider] = key.split(" ");
      const got = await download(dst.srv.url, dst.admin, tag!, version!, provider!);
      assertEquals(got.status, 200, key);
      assert(
        got.bytes.length === file.length && got.bytes.every((b, i) => b === file[i]),
        `${key} is byte-identical`,
      );
    }
  } finally {
    await src.stop();
    await dst.stop();
  }
});
