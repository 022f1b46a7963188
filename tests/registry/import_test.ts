// `wharf registry import` from one wharf into another: everything arrives as the source shows it, a second
// run copies nothing, a bad file is reported while the rest arrives, and a v1-only source goes through v1.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import type { Fixture } from "./helpers.ts";
import { runRegistryCli } from "../../cli/registry/mod.ts";
import { message } from "../../cli/import/sync.ts";
import { mayCarryToken } from "../../cli/import/http.ts";
import {
  addProvider,
  addVersion,
  boxView,
  bytes,
  download,
  hex,
  importer,
  setStatus,
  withImportPair,
} from "./import_helpers.ts";

const TAGS = ["acme/devbox", "acme/secret"];

Deno.test("an organization imported from a wharf answers the same, files, privacy, counts and times included", () =>
  withImportPair(async ({ src, dst, org, args }) => {
    const before = Object.fromEntries(
      await Promise.all(TAGS.map(async (t) => [t, await boxView(src.srv.url, org.token, t)])),
    );
    assertEquals((before["acme/devbox"] as { downloads: number }).downloads, 3);
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
  }));

Deno.test("a re-run after the source changed copies only the new and changed files", () =>
  withImportPair(async ({ src, dst, org, args }) => {
    const env = { VAGRANT_CLOUD_TOKEN: org.token };
    assertEquals((await importer(args, env)).code, 0);
    const token = org.token;
    const dev = "/api/v2/box/acme/devbox";
    // A new description, a new version with a file, 1.2.0's file replaced under a new checksum, 1.1.0's file
    // (no checksum) replaced by one of another size.
    assertEquals(
      (await src.api.put(dev, { box: { description: "Now *better*", is_private: false } }, { token })).status,
      200,
    );
    await addVersion(src, token, "acme/devbox", "1.3.0", "New");
    const newFile = bytes(9000, 7);
    await addProvider(src, token, "acme/devbox", "1.3.0", {
      name: "virtualbox",
      architecture: "amd64",
      file: newFile,
    });
    await setStatus(src, token, "acme/devbox", "1.3.0", "release");
    const p120 = `${dev}/version/1.2.0/provider/virtualbox/amd64`;
    assertEquals(
      (await src.api.put(p120, { provider: { checksum: "", checksum_type: "" } }, { token })).status,
      200,
    );
    const replaced = bytes(1500, 8);
    await upload(src, token, p120, replaced);
    const set = await src.api.put(p120, {
      provider: { checksum_type: "sha1", checksum: hex("sha1", replaced) },
    }, { token });
    assertEquals(set.status, 200, set.text);
    const grown = bytes(25_000, 6);
    await upload(src, token, `${dev}/version/1.1.0/provider/virtualbox/amd64`, grown);
    const before = await boxView(src.srv.url, token, "acme/devbox");

    const run = await importer([...args, "--json"], env);
    assertEquals(run.code, 0, run.out + run.err);
    const report = JSON.parse(run.out);
    assertEquals([report.files.copied, report.versions.created, report.boxes.updated], [3, 1, 1]);
    // The count was carried when the box first arrived; the source's has since grown by the importer's own
    // downloads, which are not carried.
    assertEquals(await boxView(dst.srv.url, dst.admin, "acme/devbox"), { ...before, downloads: 3 });
    for (const [version, file] of [["1.3.0", newFile], ["1.2.0", replaced], ["1.1.0", grown]] as const) {
      const got = await download(dst.srv.url, dst.admin, "acme/devbox", version, "virtualbox/amd64");
      assert(got.bytes.length === file.length && got.bytes.every((b, i) => b === file[i]), version);
    }
    const again = JSON.parse((await importer([...args, "--json"], env)).out);
    assertEquals([again.files.copied, again.boxes.unchanged], [0, 2]);
  }));

async function upload(f: Fixture, token: string, providerPath: string, file: Uint8Array<ArrayBuffer>) {
  const prepared = await f.api.get(`${providerPath}/upload`, { token });
  assertEquals(prepared.status, 200, prepared.text);
  const put = await fetch(prepared.body.upload_path, { method: "PUT", body: file });
  assertEquals(put.status, 200, await put.text());
}

Deno.test("wharf registry import explains its usage and refuses bad options with exit 2", async () => {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: (t: string) => out.push(t),
    stderr: (t: string) => err.push(t),
    readStdin: () => Promise.resolve(""),
    promptPassword: () => Promise.resolve(undefined),
    env: {},
  };
  assertEquals(await runRegistryCli(["import", "--help"], io), 0);
  assertStringIncludes(out.join("\n"), "--namespace SRC[=DEST]");
  assertEquals(await runRegistryCli(["import", "--from", "https://vagrantcloud.com"], io), 2);
  assertStringIncludes(err.join("\n"), "name what to import: --namespace SRC or --box SRC/NAME");
  const bad = await importer(["--from", "ftp://x", "--namespace", "acme", "--source-token", "sekrit-1"]);
  assertEquals(bad.code, 2);
  assertStringIncludes(bad.err, "--from must be an http or https URL");
  const parallel = await importer(["--from", "https://x", "--box", "a/b", "--parallel", "0"]);
  assertStringIncludes(parallel.err, "--parallel takes a whole number from 1 to 64");
  const stray = await importer(["--from", "https://x", "--box", "a/b", "sekrit-2"]);
  assertEquals(stray.code, 2);
  assert(!stray.err.includes("sekrit-2"), "a stray argument (perhaps a secret) is not echoed");
  assert(
    mayCarryToken(
      "https://app.vagrantup.com/a/boxes/b/versions/1/providers/v.box",
      "https://vagrantcloud.com",
    ),
  );
  assert(!mayCarryToken("https://archivist.hashicorp.com/v2/object/x?sig=1", "https://vagrantcloud.com"));
  assert(!mayCarryToken("http://app.vagrantup.com/x", "https://vagrantcloud.com"), "never over plain http");
  assert(!mayCarryToken("http://127.0.0.1:2/x", "http://127.0.0.1:1"), "another port is another origin");
  const fetchError = new TypeError(
    "error sending request for url (http://127.0.0.1:9/api/v2/uploads/SECRET-ID)",
  );
  assertEquals(message(fetchError), "error sending request for url (http://127.0.0.1:9/…)");
});
