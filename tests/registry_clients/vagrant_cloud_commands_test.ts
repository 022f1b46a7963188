// The fine-grained `vagrant cloud box|version|provider` commands against wharf: each exits 0 and its effect is
// visible through the API (docs/registry-clients.md#request-lists-as-recorded), including the nulls the CLI echoes
// on updates.

import { assertEquals } from "../helpers/assert.ts";
import { buildBoxFile, cmd, describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { readBox, withClientServer } from "./registry_api.ts";

const skip = explainSkip("vagrant cloud command tests", await vagrantMissing());

const B = "/api/v1/box/acme/cmdbox";
const checksum = "c0ffee".repeat(10) + "abcd";

Deno.test({
  name: "vagrant cloud box, version and provider commands take effect when run with -f",
  ignore: skip,
  fn: (t) =>
    withClientServer(
      (url) => VagrantSandbox.create(url),
      async (_server, sandbox, { api, aliceToken: token }) => {
        const file = await buildBoxFile(sandbox.root, "cmdbox.box");
        const vagrant = async (args: string[]) => {
          const result = await sandbox.vagrant(["cloud", ...args], { VAGRANT_CLOUD_TOKEN: token });
          assertEquals(result.code, 0, describeRun(`vagrant cloud ${args.join(" ")}`, result));
        };
        const provider = (name: string) => api.call("GET", `${B}/version/2.0.0/provider/${name}`, { token });

        await t.step("box create and box update", async () => {
          await vagrant([
            "box",
            "create",
            "acme/cmdbox",
            "-s",
            "short one",
            "-d",
            "long one",
            "--no-private",
          ]);
          await vagrant(["box", "update", "acme/cmdbox", "-s", "shorter"]);
          const box = await readBox(api, token, "acme/cmdbox");
          assertEquals([box.short_description, box.description, box.private], ["shorter", "long one", false]);
        });

        await t.step("version create and version update", async () => {
          await vagrant(["version", "create", "acme/cmdbox", "2.0.0", "-d", "two"]);
          await vagrant(["version", "update", "acme/cmdbox", "2.0.0", "-d", "two, updated"]);
          const version = await api.expectOk("GET", `${B}/version/2.0.0`, { token });
          assertEquals([version.status, version.description_markdown], ["unreleased", "two, updated"]);
        });

        await t.step(
          "provider create with a url and checksum, then update of the url keeps the checksum",
          async () => {
            await vagrant(
              cmd(
                "provider create acme/cmdbox virtualbox 2.0.0 https://downloads.example.invalid/a.box -c",
                checksum,
                "-C",
                "sha256",
              ),
            );
            await vagrant(
              cmd("provider update acme/cmdbox virtualbox 2.0.0 https://downloads.example.invalid/b.box"),
            );
            const stored = (await provider("virtualbox")).body as Record<string, unknown>;
            assertEquals(
              [stored.url, stored.hosted, stored.checksum, stored.checksum_type],
              ["https://downloads.example.invalid/b.box", false, checksum, "sha256"],
            );
          },
        );

        await t.step("provider create without a url, then provider upload makes it hosted", async () => {
          await vagrant(["provider", "create", "acme/cmdbox", "libvirt", "2.0.0"]);
          await vagrant(["provider", "upload", "acme/cmdbox", "libvirt", "2.0.0", file]);
          const stored = (await provider("libvirt")).body as Record<string, unknown>;
          assertEquals(stored.hosted, true, JSON.stringify(stored));
        });

        await t.step("version release, provider delete, version revoke", async () => {
          await vagrant(["version", "release", "acme/cmdbox", "2.0.0", "-f"]);
          assertEquals((await readBox(api, token, "acme/cmdbox")).current_version?.version, "2.0.0");
          await vagrant(["provider", "delete", "acme/cmdbox", "libvirt", "2.0.0", "-f"]);
          assertEquals((await provider("libvirt")).status, 404);
          await vagrant(["version", "revoke", "acme/cmdbox", "2.0.0", "-f"]);
          const box = await readBox(api, token, "acme/cmdbox");
          assertEquals([box.current_version, box.versions[0]?.status], [null, "revoked"]);
        });

        await t.step("version delete and box delete", async () => {
          await vagrant(["version", "delete", "acme/cmdbox", "2.0.0", "-f"]);
          assertEquals((await api.call("GET", `${B}/version/2.0.0`, { token })).status, 404);
          await vagrant(["box", "delete", "acme/cmdbox", "-f"]);
          assertEquals((await api.call("GET", B, { token })).status, 404);
        });
      },
    ),
});
