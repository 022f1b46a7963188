// `wharf registry import` options: --box with a new name, a target namespace that does not exist yet, and
// --copy-external (a file the source only links to becomes a hosted file on the target).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { createUser, startRegistry } from "./helpers.ts";
import { addProvider, addVersion, bytes, download, hex, importer, setStatus } from "./import_helpers.ts";

Deno.test("--box renames into another namespace, which must exist; --copy-external hosts linked files", async () => {
  const file = bytes(12_345, 11);
  const files = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => new Response(file));
  const src = await startRegistry();
  const dst = await startRegistry();
  try {
    const alice = await createUser(src, "alice");
    const box = await src.api.post("/api/v2/boxes", { box: { name: "ext", is_private: false } }, {
      token: alice,
    });
    assertEquals(box.status, 200, box.text);
    await addVersion(src, alice, "alice/ext", "2.0.0", "linked");
    const url = `http://127.0.0.1:${files.addr.port}/ext-2.0.0.box`;
    const created = await src.api.post("/api/v2/box/alice/ext/version/2.0.0/providers", {
      provider: {
        name: "qemu",
        architecture: "arm64",
        url,
        checksum_type: "sha256",
        checksum: hex("sha256", file),
      },
    }, { token: alice });
    assertEquals(created.status, 200, created.text);
    await addProvider(src, alice, "alice/ext", "2.0.0", {
      name: "qemu",
      architecture: "amd64",
      file: bytes(500, 12),
    });
    await setStatus(src, alice, "alice/ext", "2.0.0", "release");
    const args = [
      "--from",
      src.srv.url,
      "--box",
      "alice/ext=archive/old-ext",
      "--server",
      dst.srv.url,
      "--token",
      dst.admin,
      "--source-token",
      alice,
    ];
    const missing = await importer(args);
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.out, "namespace archive does not exist on the target");
    const org = await dst.api.post("/api/v1/admin/organizations", { organization: { name: "archive" } }, {
      token: dst.admin,
    });
    assertEquals(org.status, 200, org.text);
    const run = await importer([...args, "--copy-external", "--json"]);
    assertEquals(run.code, 0, run.out + run.err);
    assertEquals(JSON.parse(run.out).files.copied, 2);
    const p = await dst.api.get("/api/v2/box/archive/old-ext/version/2.0.0/provider/qemu/arm64", {
      token: dst.admin,
    });
    assertEquals([p.body.hosted, p.body.url, p.body.checksum], [true, null, hex("sha256", file)]);
    const got = await download(dst.srv.url, dst.admin, "archive/old-ext", "2.0.0", "qemu/arm64");
    assert(got.bytes.length === file.length && got.bytes.every((b, i) => b === file[i]));
    const v = await dst.api.get("/api/v2/box/archive/old-ext/version/2.0.0", { token: dst.admin });
    assertEquals(v.body.status, "active");
    // Without --copy-external the hosted copy stays: nothing is undone or copied again.
    const again = JSON.parse((await importer([...args, "--json"])).out);
    assertEquals([again.files.copied, again.ok], [0, true]);
  } finally {
    await src.stop();
    await dst.stop();
    await files.shutdown();
  }
});
