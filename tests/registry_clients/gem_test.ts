// The vagrant_cloud gem 3.0.5 (the library behind `vagrant cloud`) scripted against wharf: create, both
// upload modes, release, updates that echo loaded values, search; then vagrant installs the result
// (docs/registry.md#the-vagrant_cloud-gem-30x).

import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  buildBoxFile,
  describeRun,
  explainSkip,
  gemMissing,
  runRuby,
  vagrantMissing,
  VagrantSandbox,
} from "./clients.ts";
import { readBox, withClientServer } from "./registry_api.ts";

const skipGem = explainSkip("vagrant_cloud gem tests", await gemMissing());
const vagrantReason = skipGem ? undefined : await vagrantMissing();

// Publishes acme/gembox 1.0.0 (standard upload) and 1.1.0 (direct upload), then updates box and version
// from loaded state the way `vagrant cloud box update` does, and searches. Prints one JSON summary line.
const publishScript = `
require "json"
require "vagrant_cloud"
account = VagrantCloud::Account.new(custom_server: ENV.fetch("BASE") + "/api/v1", access_token: ENV.fetch("TOKEN"))
org = account.organization(name: "acme")
box = org.add_box("gembox")
box.short_description = "from the gem"
box.private = false
v1 = box.add_version("1.0.0")
p1 = v1.add_provider("virtualbox")
box.save
p1.upload(path: ENV.fetch("FILE1"))
v1.release
v2 = box.add_version("1.1.0")
v2.description = "direct upload"
p2 = v2.add_provider("virtualbox")
box.save
p2.upload(path: ENV.fetch("FILE2"), direct: true)
v2.release
reloaded = account.organization(name: "acme").boxes.detect { |b| b.name == "gembox" }
reloaded.short_description = "updated by the gem"
reloaded.save
version = reloaded.versions.detect { |v| v.version == "1.0.0" }
version.description = "first cut"
version.save
found = account.searcher.search(query: "gembox", provider: "virtualbox", sort: "created", order: "asc", limit: 5, page: 1)
puts JSON.dump({
  username: account.username,
  statuses: [v1.status, v2.status],
  search: found.boxes.map { |b| [b.tag, b.current_version.version, b.current_version.providers.map(&:name)] },
})
`;

Deno.test({
  name: "vagrant_cloud gem publishes with both upload modes when its custom_server is wharf",
  ignore: skipGem,
  fn: (t) =>
    withClientServer((url) => VagrantSandbox.create(url), async (server, sandbox, { api, aliceToken }) => {
      const file1 = await buildBoxFile(sandbox.root, "gem-1.box");
      const file2 = await buildBoxFile(sandbox.root, "gem-2.box");

      await t.step("the script creates, uploads, releases, updates and finds the box", async () => {
        const result = await runRuby(publishScript, {
          BASE: server.url,
          TOKEN: aliceToken,
          FILE1: file1,
          FILE2: file2,
        });
        assertEquals(result.code, 0, describeRun("ruby vagrant_cloud script", result));
        const summary = JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}");
        assertEquals(summary, {
          username: "alice",
          statuses: ["active", "active"],
          search: [["acme/gembox", "1.1.0", ["virtualbox"]]],
        });
      });

      await t.step("the server stored what the gem sent, including echoed loaded values", async () => {
        const box = await readBox(api, aliceToken, "acme/gembox");
        assertEquals(box.private, false, "the gem echoes the loaded private=false on update");
        assertEquals(box.short_description, "updated by the gem");
        assertEquals(box.current_version?.version, "1.1.0");
        assertEquals(
          box.versions.map((v) => [v.version, v.status, v.providers.map((p) => p.hosted)]),
          [["1.1.0", "active", [true]], ["1.0.0", "active", [true]]],
        );
        const v100 = await api.expectOk("GET", "/api/v1/box/acme/gembox/version/1.0.0", {
          token: aliceToken,
        });
        assertEquals(v100.description_markdown, "first cut");
      });

      await t.step({
        name: "vagrant box add installs the gem-published box",
        ignore: explainSkip("the box add step of the gem test", vagrantReason),
        async fn() {
          const add = await sandbox.vagrant(["box", "add", "acme/gembox"]);
          assertEquals(add.code, 0, describeRun("vagrant box add acme/gembox", add));
          assertStringIncludes(add.output, "(v1.1.0)");
          assertEquals(await sandbox.installedVersions("acme/gembox"), ["1.1.0"]);
        },
      });
    }),
});
