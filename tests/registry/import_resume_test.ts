// `wharf registry import` when things go wrong: a source file that does not match its checksum, an import
// killed in the middle of a large file, and a source that speaks only API v1.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startRegistry } from "./helpers.ts";
import { boxView, download, importer, sourceOrg, startImportTarget } from "./import_helpers.ts";
import { startRegistryProxy } from "../fixtures/registry_proxy.ts";
import { alterBlob } from "../helpers/stored.ts";

const TAGS = ["acme/devbox", "acme/secret"];
const mainPath = new URL("../../main.ts", import.meta.url).pathname;

async function views(url: string, token: string, api: 1 | 2 = 2) {
  return Object.fromEntries(await Promise.all(TAGS.map(async (t) => [t, await boxView(url, token, t, api)])));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

Deno.test("a source file that does not match its checksum is reported and not hosted; the rest arrives; exit 1", async () => {
  const src = await startRegistry();
  const dst = await startImportTarget();
  try {
    const org = await sourceOrg(src);
    const before = await views(src.srv.url, org.token);
    // The source's stored file changes under its declared checksum (a bad disk, a botched upload).
    const file = org.files.get("acme/secret 1.0.0 vmware_desktop/amd64")!;
    const sha = createHash("sha256").update(file).digest("hex");
    await alterBlob(src.srv, sha, (bytes) => bytes[100] = bytes[100]! ^ 0xff);
    const run = await importer(
      ["--from", src.srv.url, "--namespace", "acme", "--server", dst.srv.url, "--token", dst.admin],
      { VAGRANT_CLOUD_TOKEN: org.token },
    );
    assertEquals(run.code, 1, run.out);
    assertStringIncludes(
      run.out,
      "FAILED acme/secret 1.0.0 vmware_desktop/amd64: Checksum mismatch: expected sha384",
    );
    assertStringIncludes(run.out, "5 files copied");
    const provider = await dst.api.get(
      "/api/v2/box/acme/secret/version/1.0.0/provider/vmware_desktop/amd64",
      {
        token: dst.admin,
      },
    );
    assertEquals([provider.body.hosted, provider.body.checksum], [
      false,
      before["acme/secret"].versions[0].providers[0].checksum,
    ]);
    assertEquals(
      (await download(dst.srv.url, dst.admin, "acme/secret", "1.0.0", "vmware_desktop/amd64")).status,
      404,
    );
    const secret = await dst.api.get("/api/v2/box/acme/secret/version/1.0.0", { token: dst.admin });
    assertEquals(secret.body.status, "unreleased");
    assertEquals(await boxView(dst.srv.url, dst.admin, "acme/devbox"), before["acme/devbox"]);
  } finally {
    await src.stop();
    await dst.stop();
  }
});

Deno.test("an import killed in the middle of a large file is completed by the next run, identically", async () => {
  const proxy = startRegistryProxy({ delayPerChunk: 15 });
  // The source serves the bytes itself, through the slow proxy (a 302 to an object store would bypass it).
  const source = await startRegistry({ WHARF_PUBLIC_URL: proxy.url, WHARF_DOWNLOADS: "proxy" });
  proxy.upstream = source.srv.url;
  const dst = await startImportTarget();
  const big = 8 * 1024 * 1024;
  try {
    const org = await sourceOrg(source, { bigFile: big });
    const before = await views(source.srv.url, org.token);
    const args = ["--from", proxy.url, "--namespace", "acme", "--server", dst.srv.url, "--token", dst.admin];
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", mainPath, "registry", "import", ...args, "--parallel", "1"],
      env: { VAGRANT_CLOUD_TOKEN: org.token },
      stdout: "null",
      stderr: "null",
      stdin: "null",
    }).spawn();
    const deadline = Date.now() + 60_000;
    while (proxy.downloaded < 2 * 1024 * 1024 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert(proxy.downloaded >= 2 * 1024 * 1024, "the first run got into the large file");
    child.kill("SIGKILL");
    await child.status;
    const half = await dst.api.get("/api/v2/box/acme/devbox/version/1.0.0/provider/virtualbox/amd64", {
      token: dst.admin,
    });
    assertEquals(half.body.hosted, false, "the interrupted file was not kept");
    proxy.options.delayPerChunk = 0;
    const run = await importer(args, { VAGRANT_CLOUD_TOKEN: org.token });
    assertEquals(run.code, 0, run.out + run.err);
    assertEquals(await views(dst.srv.url, dst.admin), before);
    for (const [key, file] of org.files) {
      const [tag, version, provider] = key.split(" ");
      const got = await download(dst.srv.url, dst.admin, tag!, version!, provider!);
      assert(sameBytes(got.bytes, file), `${key} is byte-identical`);
    }
  } finally {
    await source.stop();
    await dst.stop();
    await proxy.stop();
  }
});

Deno.test("a source that answers 404 under /api/v2 is imported through API v1", async () => {
  const proxy = startRegistryProxy();
  const src = await startRegistry({ WHARF_PUBLIC_URL: proxy.url });
  proxy.upstream = src.srv.url;
  const dst = await startImportTarget();
  try {
    const org = await sourceOrg(src);
    const before = await views(src.srv.url, org.token, 1);
    proxy.options.v1Only = true;
    const run = await importer(
      ["--from", proxy.url, "--namespace", "acme", "--server", dst.srv.url, "--token", dst.admin, "--json"],
      { VAGRANT_CLOUD_TOKEN: org.token },
    );
    assertEquals(run.code, 0, run.out + run.err);
    const report = JSON.parse(run.out);
    assertEquals(report.source_api, 1);
    assertEquals(await views(dst.srv.url, dst.admin, 1), before);
    // v1 shows each name's default architecture: arm64 for virtualbox 1.0.0, which arrives as unknown.
    const got = await download(dst.srv.url, dst.admin, "acme/devbox", "1.0.0", "virtualbox/unknown");
    assert(sameBytes(got.bytes, org.files.get("acme/devbox 1.0.0 virtualbox/arm64")!));
    const again = await importer(
      ["--from", proxy.url, "--namespace", "acme", "--server", dst.srv.url, "--token", dst.admin],
      { VAGRANT_CLOUD_TOKEN: org.token },
    );
    assertStringIncludes(again.out, "0 files copied");
    // A flaky source: a download answered 502 is tried again.
    const v = "/api/v1/box/acme/devbox/version/1.2.0/provider/virtualbox";
    assertEquals(
      (await dst.api.put(v, { provider: { checksum: "", checksum_type: "" } }, { token: dst.admin })).status,
      200,
    );
    proxy.options.failDownloads = 1;
    const flaky = await importer(
      ["--from", proxy.url, "--namespace", "acme", "--server", dst.srv.url, "--token", dst.admin],
      { VAGRANT_CLOUD_TOKEN: org.token },
    );
    assertEquals(flaky.code, 0, flaky.out + flaky.err);
    assertStringIncludes(flaky.err, "retrying acme/devbox 1.2.0 virtualbox/unknown: download from");
    assertStringIncludes(flaky.out, "1 files copied");
  } finally {
    await src.stop();
    await dst.stop();
    await proxy.stop();
  }
});
