// The real vagrant 2.3.4 CLI against wharf: token login, publish (direct and standard upload), box show,
// search, box add with and without a token, box outdated --global and box update
// (docs/registry.md#vagrant-23-and-older, docs/registry-clients.md#request-lists-as-recorded).

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { buildBoxFile, cmd, describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { bootstrapRegistry, clientTestEnv, readBox } from "./registry_api.ts";
import { assertHostedDownload, watchDownloads } from "./download_watch.ts";

const skip = explainSkip("vagrant CLI tests", await vagrantMissing());

Deno.test({
  name: "vagrant CLI publishes, finds, installs and updates boxes when pointed at wharf",
  ignore: skip,
  async fn(t) {
    const server = await startTestServer(clientTestEnv);
    const downloads = watchDownloads(server);
    const alice = await VagrantSandbox.create(server.url);
    const stranger = await VagrantSandbox.create(server.url);
    try {
      const { api, aliceToken, bobToken } = await bootstrapRegistry(server.url);
      const box1 = await buildBoxFile(alice.root, "devbox-1.box");
      // 3 MiB: large enough that curl sends `Expect: 100-continue` on the upload PUT.
      const box2 = await buildBoxFile(alice.root, "devbox-2.box", { fillerBytes: 3 * 1024 * 1024 });
      const box3 = await buildBoxFile(alice.root, "devbox-3.box", { fillerBytes: 3 * 1024 * 1024 });

      await t.step("auth login --token stores the token and whoami names its user", async () => {
        const login = await alice.vagrant(["cloud", "auth", "login", "--token", aliceToken]);
        assertEquals(login.code, 0, describeRun("vagrant cloud auth login --token", login));
        assertEquals(await alice.storedLoginToken(), aliceToken);
        const whoami = await alice.vagrant(["cloud", "auth", "whoami"]);
        assertEquals(whoami.code, 0, describeRun("vagrant cloud auth whoami", whoami));
        assertStringIncludes(whoami.output, "Currently logged in as alice");
      });

      await t.step("publish with direct upload creates, uploads and releases 1.0.0", async () => {
        const publish = await alice.vagrant(
          cmd("cloud publish acme/devbox 1.0.0 virtualbox", box1, "--release", "-f"),
        );
        assertEquals(publish.code, 0, describeRun("vagrant cloud publish (direct)", publish));
        assertStringIncludes(publish.output, "Complete! Published acme/devbox");
        const box = await readBox(api, aliceToken, "acme/devbox");
        assertEquals(box.private, true, "a box created without --private/--no-private is private");
        const v100 = box.versions.find((v) => v.version === "1.0.0");
        assertEquals(v100?.status, "active");
        assertEquals(v100?.providers.map((p) => [p.name, p.hosted]), [["virtualbox", true]]);
      });

      await t.step("publish --no-direct-upload releases 1.1.0 and sets the descriptions", async () => {
        const publish = await alice.vagrant(
          cmd(
            "cloud publish acme/devbox 1.1.0 virtualbox",
            box2,
            "--release",
            "-f",
            "--no-direct-upload",
            "-d",
            "The devbox long description",
            "-s",
            "devbox short",
            "--version-description",
            "second cut",
          ),
        );
        assertEquals(publish.code, 0, describeRun("vagrant cloud publish --no-direct-upload", publish));
        const box = await readBox(api, aliceToken, "acme/devbox");
        assertEquals(box.description, "The devbox long description");
        assertEquals(box.short_description, "devbox short");
        assertEquals(box.current_version?.version, "1.1.0");
        assertEquals(box.versions.map((v) => [v.version, v.status]), [["1.1.0", "active"], [
          "1.0.0",
          "active",
        ]]);
        assertEquals(box.versions[0]?.providers.map((p) => p.hosted), [true]);
      });

      await t.step("box show prints the description and each version once", async () => {
        const show = await alice.vagrant(["cloud", "box", "show", "acme/devbox"]);
        assertEquals(show.code, 0, describeRun("vagrant cloud box show", show));
        assertMatch(show.output, /Description:\s+The devbox long description/);
        assertMatch(show.output, /Current Version:\s+1\.1\.0/);
        assertMatch(show.output, /Versions:\s+1\.1\.0, 1\.0\.0\s*\n/);
        assertMatch(show.output, /Private:\s+yes/);
      });

      await t.step(
        "search lists the private box for a member and nothing for outsiders",
        async () => {
          const search = await alice.vagrant(["cloud", "search", "devbox"]);
          assertEquals(search.code, 0, describeRun("vagrant cloud search (alice)", search));
          assertMatch(search.output, /\|\s*acme\/devbox\s*\|\s*1\.1\.0\s*\|\s*\d+\s*\|\s*virtualbox\s*\|/);
          const anonymous = await stranger.vagrant(["cloud", "search", "devbox"]);
          assertEquals(anonymous.code, 0, describeRun("vagrant cloud search (anonymous)", anonymous));
          assert(!anonymous.output.includes("acme/devbox"), describeRun("anonymous search", anonymous));
          const outsider = await stranger.vagrant(cmd("cloud search devbox"), {
            VAGRANT_CLOUD_TOKEN: bobToken,
          });
          assertEquals(outsider.code, 0, describeRun("vagrant cloud search (bob, not in acme)", outsider));
          assert(!outsider.output.includes("acme/devbox"), describeRun("bob's search", outsider));
          const short = await alice.vagrant(["cloud", "search", "--short", "--sort-by", "created", "devbox"]);
          assertEquals(short.code, 0, describeRun("vagrant cloud search --short", short));
          assertStringIncludes(short.output, "acme/devbox");
        },
      );

      await t.step("box add with the token installs 1.1.0 after checking its checksum", async () => {
        const add = await alice.vagrant(["box", "add", "acme/devbox", "--provider", "virtualbox"]);
        assertEquals(add.code, 0, describeRun("vagrant box add (token)", add));
        assertStringIncludes(add.output, "Successfully added box 'acme/devbox' (v1.1.0) for 'virtualbox'");
        assertStringIncludes(add.output, "Calculating and comparing box checksum");
        assertEquals(await alice.installedVersions("acme/devbox"), ["1.1.0"]);
        assertHostedDownload(downloads, server, "vagrant 2.3.4 box add");
      });

      await t.step("box add without a token fails cleanly for a private box", async () => {
        const add = await stranger.vagrant(["box", "add", "acme/devbox", "--provider", "virtualbox"]);
        assert(add.code !== 0, describeRun("vagrant box add (anonymous)", add));
        assertStringIncludes(add.output, "could not be found or");
        assertEquals(await stranger.installedVersions("acme/devbox"), []);
      });

      await t.step(
        "box outdated --global reports 1.2.0 once it is released and box update installs it",
        async () => {
          const upToDate = await alice.vagrant(["box", "outdated", "--global"]);
          assertEquals(upToDate.code, 0, describeRun("vagrant box outdated --global", upToDate));
          assertStringIncludes(upToDate.output, "'acme/devbox' for 'virtualbox' (v1.1.0) is up to date");
          const publish = await alice.vagrant(
            cmd("cloud publish acme/devbox 1.2.0 virtualbox", box3, "--release", "-f"),
          );
          assertEquals(publish.code, 0, describeRun("vagrant cloud publish 1.2.0", publish));
          const outdated = await alice.vagrant(["box", "outdated", "--global"]);
          assertStringIncludes(
            outdated.output,
            "'acme/devbox' for 'virtualbox' is outdated! Current: 1.1.0. Latest: 1.2.0",
            describeRun("vagrant box outdated --global", outdated),
          );
          const update = await alice.vagrant(cmd("box update --box acme/devbox --provider virtualbox"));
          assertEquals(update.code, 0, describeRun("vagrant box update --box", update));
          assertEquals(await alice.installedVersions("acme/devbox"), ["1.1.0", "1.2.0"]);
        },
      );

      await t.step("a public box installs without any token", async () => {
        const publish = await alice.vagrant(
          cmd("cloud publish acme/openbox 0.1.0 virtualbox", box1, "--release", "-f", "--no-private"),
        );
        assertEquals(publish.code, 0, describeRun("vagrant cloud publish --no-private", publish));
        const box = await readBox(api, aliceToken, "acme/openbox");
        assertEquals(box.private, false);
        const add = await stranger.vagrant(["box", "add", "acme/openbox"]);
        assertEquals(add.code, 0, describeRun("vagrant box add (public, anonymous)", add));
        assertEquals(await stranger.installedVersions("acme/openbox"), ["0.1.0"]);
      });

      await t.step(
        "a trailing slash in VAGRANT_SERVER_URL (metadata at //acme/openbox) still works",
        async () => {
          const slashed = await VagrantSandbox.create(`${server.url}/`);
          try {
            const add = await slashed.vagrant(["box", "add", "acme/openbox"]);
            assertEquals(add.code, 0, describeRun("vagrant box add (server URL with trailing slash)", add));
            assertEquals(await slashed.installedVersions("acme/openbox"), ["0.1.0"]);
          } finally {
            await slashed.remove();
          }
        },
      );

      await t.step(
        "VAGRANT_SERVER_ACCESS_TOKEN_BY_URL sends the token as access_token and installs",
        async () => {
          const byUrl = await VagrantSandbox.create(server.url);
          try {
            const add = await byUrl.vagrant(["box", "add", "acme/devbox", "--provider", "virtualbox"], {
              VAGRANT_CLOUD_TOKEN: aliceToken,
              VAGRANT_SERVER_ACCESS_TOKEN_BY_URL: "1",
            });
            assertEquals(add.code, 0, describeRun("vagrant box add (access_token by URL)", add));
            assertEquals(await byUrl.installedVersions("acme/devbox"), ["1.2.0"]);
          } finally {
            await byUrl.remove();
          }
        },
      );
    } finally {
      await alice.remove();
      await stranger.remove();
      await server.stop();
    }
  },
});
