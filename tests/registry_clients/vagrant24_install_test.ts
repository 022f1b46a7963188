// Vagrant 2.4.9 publishes one box per architecture on wharf (direct and standard upload), finds it with
// `cloud search --architecture`, installs the file built for the host's architecture (and refuses a host
// architecture the box lacks), follows new versions with `box outdated`/`box update`; Debian's vagrant 2.3.4
// installs the default architecture's file of the same box (docs/registry.md#vagrant-24,
// docs/registry.md#how-vagrant-23-and-24-see-the-same-box).

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { cmd, describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { bootstrapRegistry, clientTestEnv } from "./registry_api.ts";
import { installedMarkers, markedBox, sandbox24, vagrant24Missing } from "./vagrant24.ts";
import { loggedEvents } from "../helpers/stored.ts";
import { assertHostedDownload, watchDownloads } from "./download_watch.ts";

const skip = explainSkip("Vagrant 2.4.9 publish and install tests", await vagrant24Missing());
const debianVagrant = await vagrantMissing();

Deno.test({
  name: "Vagrant 2.4.9 publishes per architecture and installs the host's file; 2.3.4 gets the default",
  ignore: skip,
  async fn(t) {
    const server = await startTestServer(clientTestEnv);
    const downloads = watchDownloads(server);
    // The publisher passes its token in the environment; the installers have none (a public box), so vagrant
    // does not pause to warn that a token goes to a custom server.
    const publisher = await sandbox24(server.url);
    const installer = await sandbox24(server.url);
    try {
      const { aliceToken } = await bootstrapRegistry(server.url);
      const asAlice = { VAGRANT_CLOUD_TOKEN: aliceToken };
      const publish = async (version: string, arch: string, ...flags: string[]) => {
        const file = await markedBox(publisher.root, `${arch}-${version}`);
        const run = await publisher.vagrant(
          cmd(
            `cloud publish acme/devbox ${version} virtualbox`,
            file,
            "--architecture",
            arch,
            ...flags,
            "-f",
          ),
          asAlice,
        );
        assertEquals(run.code, 0, describeRun(`vagrant cloud publish ${version} ${arch}`, run));
        return run.output;
      };
      const add = (arch: string) =>
        installer.vagrant(cmd("box add acme/devbox --provider virtualbox"), {
          VAGRANT_HOST_ARCHITECTURE: arch,
        });

      await t.step(
        "cloud publish: amd64 by direct upload as the default, arm64 with --no-direct-upload",
        async () => {
          const amd = await publish("1.0.0", "amd64", "--default-architecture", "--release", "--no-private");
          assertStringIncludes(amd, "Complete! Published acme/devbox");
          assertMatch(amd, /Default Architecture:\s+yes/);
          const arm = await publish("1.0.0", "arm64", "--no-direct-upload", "--no-private");
          assertMatch(arm, /Architecture:\s+arm64/);
          assertMatch(arm, /Default Architecture:\s+no/);
          const uploads = (await loggedEvents(server)).filter((e) => e.Type === "ProviderUploaded");
          assertEquals(
            uploads.map((e) => [e.Key, (e.Payload as { mode: string }).mode]),
            [["acme/devbox/1.0.0/virtualbox/amd64", "direct"], [
              "acme/devbox/1.0.0/virtualbox/arm64",
              "standard",
            ]],
          );
        },
      );

      await t.step("cloud search --architecture finds the box for arm64 and not for i386", async () => {
        const arm = await publisher.vagrant(cmd("cloud search --architecture arm64 devbox"), asAlice);
        assertEquals(arm.code, 0, describeRun("vagrant cloud search --architecture arm64", arm));
        assertMatch(
          arm.output,
          /\|\s*acme\/devbox\s*\|\s*1\.0\.0\s*\|\s*\d+\s*\|\s*virtualbox\s*\|\s*amd64, arm64\s*\|/,
        );
        const i386 = await publisher.vagrant(cmd("cloud search --architecture i386 devbox"), asAlice);
        assertStringIncludes(
          i386.output,
          "No results found",
          describeRun("cloud search --architecture i386", i386),
        );
      });

      await t.step("box add installs the amd64 file on amd64 and the arm64 file on arm64", async () => {
        downloads.length = 0;
        const amd = await add("amd64");
        assertEquals(amd.code, 0, describeRun("vagrant box add (amd64 host)", amd));
        assertStringIncludes(amd.output, "/api/v2/vagrant/acme/devbox");
        assertStringIncludes(
          amd.output,
          "Successfully added box 'acme/devbox' (v1.0.0) for 'virtualbox (amd64)'",
        );
        const arm = await add("arm64");
        assertEquals(arm.code, 0, describeRun("vagrant box add (VAGRANT_HOST_ARCHITECTURE=arm64)", arm));
        assertEquals(await installedMarkers(installer, "acme/devbox"), {
          "1.0.0/amd64/virtualbox": "amd64-1.0.0",
          "1.0.0/arm64/virtualbox": "arm64-1.0.0",
        });
        assertHostedDownload(downloads, server, "vagrant 2.4.9 box add");
      });

      await t.step("a host architecture the box lacks (and no unknown default) is refused", async () => {
        const s390x = await add("s390x");
        assert(s390x.code !== 0, describeRun("vagrant box add (s390x host)", s390x));
        assertStringIncludes(s390x.output, "doesn't support the provider");
        assertEquals(Object.keys(await installedMarkers(installer, "acme/devbox")).length, 2);
      });

      await t.step({
        name: "Debian's vagrant 2.3.4 installs the default architecture's file of the same box",
        ignore: explainSkip("the vagrant 2.3.4 step", debianVagrant),
        async fn() {
          const old = await VagrantSandbox.create(server.url);
          try {
            downloads.length = 0;
            const add23 = await old.vagrant(cmd("box add acme/devbox --provider virtualbox"));
            assertEquals(add23.code, 0, describeRun("vagrant 2.3.4 box add", add23));
            assertHostedDownload(downloads, server, "vagrant 2.3.4 box add");
            assertEquals(await installedMarkers(old, "acme/devbox"), { "1.0.0/virtualbox": "amd64-1.0.0" });
          } finally {
            await old.remove();
          }
        },
      });

      await t.step(
        "box outdated reports 1.1.0 once published and box update installs it per architecture",
        async () => {
          const current = await installer.vagrant(cmd("box outdated --global"));
          assertStringIncludes(current.output, "'acme/devbox' for 'virtualbox' (v1.0.0) is up to date");
          await publish("1.1.0", "amd64", "--default-architecture", "--no-private");
          await publish("1.1.0", "arm64", "--release", "--no-private");
          const outdated = await installer.vagrant(cmd("box outdated --global"));
          assertStringIncludes(
            outdated.output,
            "'acme/devbox' for 'virtualbox' is outdated! Current: 1.0.0. Latest: 1.1.0",
            describeRun("vagrant box outdated --global", outdated),
          );
          const update = await installer.vagrant(
            cmd("box update --box acme/devbox --provider virtualbox --architecture arm64"),
          );
          assertEquals(update.code, 0, describeRun("vagrant box update --architecture arm64", update));
          assertEquals(
            (await installedMarkers(installer, "acme/devbox"))["1.1.0/arm64/virtualbox"],
            "arm64-1.1.0",
          );
        },
      );
    } finally {
      await publisher.remove();
      await installer.remove();
      await server.stop();
    }
  },
});
