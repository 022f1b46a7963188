// `vagrant box outdated` for a project (not --global) against wharf. It needs a usable provider for the
// machine: without VirtualBox, Debian's vagrant-libvirt plugin serves (no libvirt daemon is contacted).

import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { buildBoxFile, cmd, describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { bootstrapRegistry, clientTestEnv } from "./registry_api.ts";

async function libvirtPluginMissing(): Promise<string | undefined> {
  const missing = await vagrantMissing();
  if (missing) return missing;
  const probe = await VagrantSandbox.create("http://127.0.0.1:9", { plugins: true });
  try {
    const list = await probe.vagrant(["plugin", "list"]);
    return list.output.includes("vagrant-libvirt")
      ? undefined
      : "the vagrant-libvirt plugin is not installed";
  } finally {
    await probe.remove();
  }
}

const skip = explainSkip("vagrant box outdated (project) test", await libvirtPluginMissing());

Deno.test({
  name: "vagrant box outdated in a project reports the newer version wharf released",
  ignore: skip,
  async fn() {
    const server = await startTestServer(clientTestEnv);
    const sandbox = await VagrantSandbox.create(server.url, { plugins: true });
    try {
      const { aliceToken } = await bootstrapRegistry(server.url);
      const token = { VAGRANT_CLOUD_TOKEN: aliceToken, VAGRANT_DEFAULT_PROVIDER: "libvirt" };
      const file = await buildBoxFile(sandbox.root, "lvbox.box", { provider: "libvirt" });
      const publish = (version: string) =>
        sandbox.vagrant(
          cmd(`cloud publish acme/lvbox ${version} libvirt`, file, "--release", "-f", "--no-private"),
          token,
        );

      const first = await publish("1.0.0");
      assertEquals(first.code, 0, describeRun("vagrant cloud publish 1.0.0", first));
      const add = await sandbox.vagrant(cmd("box add acme/lvbox --provider libvirt"), token);
      assertEquals(add.code, 0, describeRun("vagrant box add acme/lvbox", add));
      await Deno.writeTextFile(
        `${sandbox.workDir}/Vagrantfile`,
        'Vagrant.configure("2") do |config|\n  config.vm.box = "acme/lvbox"\nend\n',
      );
      const second = await publish("1.1.0");
      assertEquals(second.code, 0, describeRun("vagrant cloud publish 1.1.0", second));

      const outdated = await sandbox.vagrant(cmd("box outdated"), token);
      assertEquals(outdated.code, 0, describeRun("vagrant box outdated", outdated));
      const text = outdated.output.replace(/\s+/g, " ");
      assertStringIncludes(
        text,
        "A newer version of the box 'acme/lvbox' for provider 'libvirt' is available!",
      );
      assertStringIncludes(text, "You currently have version '1.0.0'. The latest is version '1.1.0'.");
    } finally {
      await sandbox.remove();
      await server.stop();
    }
  },
});
