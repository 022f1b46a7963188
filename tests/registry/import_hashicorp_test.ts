// `wharf registry import` from a registry answering as HashiCorp documents API v2 (client credentials, box
// answers without architectures, a download redirected to a storage host), first with an owner's token on
// the target (counts and times not kept, and said so), then again with an admin's.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { createUser, startRegistry } from "./helpers.ts";
import { download, importer } from "./import_helpers.ts";
import { CLIENT_ID, CLIENT_SECRET, startVagrantCloudFixture } from "../fixtures/vagrant_cloud.ts";

Deno.test("HashiCorp's documented API v2 answers are imported, a redirected download without the token", async () => {
  const cloud = await startVagrantCloudFixture();
  const dst = await startRegistry();
  try {
    const bob = await createUser(dst, "bob");
    const org = await dst.api.post("/api/v1/admin/organizations", {
      organization: { name: "myuser", members: [{ username: "bob", role: "owner" }] },
    }, { token: dst.admin });
    assertEquals(org.status, 200, org.text);
    const env = { HCP_CLIENT_ID: CLIENT_ID, HCP_CLIENT_SECRET: CLIENT_SECRET, HCP_AUTH_URL: cloud.url };
    const args = ["--from", cloud.url, "--namespace", "myuser", "--server", dst.srv.url];
    const dry = await importer([...args, "--token", bob, "--dry-run", "--json"], env);
    assertEquals(dry.code, 0, dry.out + dry.err);
    assertEquals(JSON.parse(dry.out).would_copy, {
      files: 1,
      bytes: cloud.file.byteLength,
      unknown_sizes: 0,
    });
    cloud.storageAuthorization.length = 0;
    cloud.tokenCalls.length = 0;
    const owner = await importer([...args, "--token", bob], env);
    assertEquals(owner.code, 0, owner.out + owner.err);
    assertStringIncludes(owner.out, "note: download counts and creation times were not kept");
    assert(!(owner.out + owner.err).includes(CLIENT_SECRET) && !(owner.out + owner.err).includes("s3cr3t"));
    assertEquals(cloud.tokenCalls, [true]);
    assertEquals(cloud.storageAuthorization, [null], "the storage host never sees the token");
    const first = await dst.api.get("/api/v2/box/myuser/test", { token: dst.admin });
    assertEquals([first.body.downloads, first.body.private], [0, true]);

    const admin = await importer([...args, "--token", dst.admin, "--json"], env);
    assertEquals(admin.code, 0, admin.out + admin.err);
    const report = JSON.parse(admin.out);
    assertEquals([report.files.copied, report.notes], [0, []]);
    const box = (await dst.api.get("/api/v2/box/myuser/test", { token: dst.admin })).body;
    assertEquals(
      [
        box.private,
        box.short_description,
        box.description_markdown,
        box.downloads,
        box.created_at,
        box.updated_at,
      ],
      [
        true,
        "My dev box",
        "My development Vagrant box",
        123,
        "2017-10-20T14:19:59.842Z",
        "2017-10-20T15:23:53.363Z",
      ],
    );
    assertEquals(
      box.versions.map((
        v: { version: string; status: string; description: string },
      ) => [v.version, v.status, v.description]),
      [
        ["1.2.4", "active", "A new version"],
        ["1.2.3", "active", "A new version"],
      ],
    );
    const base = "/api/v2/box/myuser/test/version";
    const external =
      (await dst.api.get(`${base}/1.2.3/provider/virtualbox/amd64`, { token: dst.admin })).body;
    assertEquals(
      [
        external.hosted,
        external.original_url,
        external.checksum,
        external.checksum_type,
        external.default_architecture,
      ],
      [false, "https://example.com/virtualbox-1.2.3.box", "a59e7332e8bbe896f11f478fc61fa8a6", "md5", true],
    );
    assertEquals([external.created_at, external.updated_at], [
      "2017-10-20T15:23:35.718Z",
      "2017-10-20T15:23:35.718Z",
    ]);
    const hosted = (await dst.api.get(`${base}/1.2.4/provider/virtualbox/amd64`, { token: dst.admin })).body;
    assertEquals([hosted.hosted, hosted.checksum, hosted.checksum_type], [true, cloud.fileSha256, "sha256"]);
    const version = (await dst.api.get(`${base}/1.2.4`, { token: dst.admin })).body;
    assertEquals([version.created_at, version.updated_at], [
      "2017-10-20T15:23:17.184Z",
      "2017-10-20T15:23:53.355Z",
    ]);
    const got = await download(dst.srv.url, dst.admin, "myuser/test", "1.2.4", "virtualbox/amd64");
    assert(got.bytes.length === cloud.file.length && got.bytes.every((b, i) => b === cloud.file[i]));
    assertEquals((await dst.api.get("/api/v2/box/myuser/test")).status, 404, "private stays private");
  } finally {
    await dst.stop();
    await cloud.stop();
  }
});

Deno.test("HCP tokens that expire during an import are renewed", async () => {
  const cloud = await startVagrantCloudFixture({ tokenTtl: 1, apiDelay: 150 });
  const dst = await startRegistry();
  try {
    const org = await dst.api.post("/api/v1/admin/organizations", { organization: { name: "myuser" } }, {
      token: dst.admin,
    });
    assertEquals(org.status, 200, org.text);
    const run = await importer(
      [
        "--from",
        cloud.url,
        "--namespace",
        "myuser",
        "--server",
        dst.srv.url,
        "--token",
        dst.admin,
        "--parallel",
        "1",
      ],
      { HCP_CLIENT_ID: CLIENT_ID, HCP_CLIENT_SECRET: CLIENT_SECRET, HCP_AUTH_URL: cloud.url },
    );
    assertEquals(run.code, 0, run.out + run.err);
    assertStringIncludes(run.out, "1 files copied");
    assert(cloud.tokenCalls.length >= 2, `tokens fetched: ${cloud.tokenCalls.length}`);
  } finally {
    await dst.stop();
    await cloud.stop();
  }
});
