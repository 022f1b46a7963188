// Vagrant 2.4.9 with the vagrant_cloud 3.1.3 gem, run from the upstream sources in ../shared/clients (beside the
// repository, as CI has it) on Debian's Ruby: where it is, whether it runs here, box files that say which
// architecture they were built for, and which of them vagrant installed.

import { type ClientRun, VagrantSandbox } from "./clients.ts";

/** ../shared relative to the repository root (WHARF_TEST_SHARED_DIR for a checkout that is not beside it). */
export const SHARED_DIR = (Deno.env.get("WHARF_TEST_SHARED_DIR")?.replace(/\/?$/, "/")) ??
  new URL("../../../shared/", import.meta.url).pathname;
export const VAGRANT24 = `${SHARED_DIR}clients/vagrant24`;

async function runs(cmd: string, args: string[]): Promise<ClientRun> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      stdin: "null",
      env: { VAGRANT_CHECKPOINT_DISABLE: "1", VAGRANT_NO_PLUGINS: "1", HOME: Deno.env.get("HOME") ?? "/tmp" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    return { code: out.code, stdout, stderr, output: stdout + stderr };
  } catch (error) {
    return { code: 127, stdout: "", stderr: String(error), output: String(error) };
  }
}

/** Why Vagrant 2.4.9 cannot run here (no ../shared, no Ruby, no Debian vagrant gems), or undefined. */
export async function vagrant24Missing(): Promise<string | undefined> {
  try {
    await Deno.stat(VAGRANT24);
  } catch {
    return `${VAGRANT24} is missing (the shared clients live in ../shared beside the repository)`;
  }
  if ((await runs("ruby", ["--version"])).code !== 0) return "`ruby` is not installed";
  const version = await runs(VAGRANT24, ["--version"]);
  if (!/Vagrant 2\.4\.9/.test(version.output)) {
    return `../shared/clients/vagrant24 does not run here (Debian's vagrant and ruby-vagrant-cloud packages ` +
      `provide its gems): ${version.output.trim().slice(-300)}`;
  }
  for (const tool of ["curl", "tar", "script"]) {
    const probe = await runs(tool, ["--version"]);
    if (probe.code === 127) return `\`${tool}\` is not installed`;
  }
  return undefined;
}

/** A sandbox (own VAGRANT_HOME, HOME, working directory) running Vagrant 2.4.9. */
export function sandbox24(serverUrl: string): Promise<VagrantSandbox> {
  return VagrantSandbox.create(serverUrl, { command: VAGRANT24 });
}

/**
 * Writes a minimal .box whose `marker.txt` holds `marker` (e.g. the architecture it stands for), so a test can
 * tell which file vagrant installed. Random filler makes every box a distinct blob.
 */
export async function markedBox(dir: string, marker: string, provider = "virtualbox"): Promise<string> {
  const src = await Deno.makeTempDir({ dir, prefix: "boxsrc-" });
  await Deno.writeTextFile(`${src}/metadata.json`, JSON.stringify({ provider }));
  await Deno.writeTextFile(`${src}/Vagrantfile`, 'Vagrant.configure("2") { |config| }\n');
  await Deno.writeTextFile(`${src}/marker.txt`, marker);
  await Deno.writeFile(`${src}/box-disk1.vmdk`, crypto.getRandomValues(new Uint8Array(32 * 1024)));
  const path = `${dir}/${marker}-${crypto.randomUUID().slice(0, 8)}.box`;
  const tar = await runs("tar", [
    "-czf",
    path,
    "-C",
    src,
    "metadata.json",
    "Vagrantfile",
    "marker.txt",
    "box-disk1.vmdk",
  ]);
  if (tar.code !== 0) throw new Error(`tar failed: ${tar.output}`);
  await Deno.remove(src, { recursive: true });
  return path;
}

/**
 * What is installed of box `tag`: the path under its box directory (`1.0.0/arm64/virtualbox` with 2.4,
 * `1.0.0/virtualbox` with 2.3) → the marker of the file installed there, sorted by path.
 */
export async function installedMarkers(
  sandbox: VagrantSandbox,
  tag: string,
): Promise<Record<string, string>> {
  const root = `${sandbox.vagrantHome}/boxes/${tag.replaceAll("/", "-VAGRANTSLASH-")}`;
  const found: [string, string][] = [];
  const walk = async (dir: string, rel: string[]): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory) await walk(`${dir}/${e.name}`, [...rel, e.name]);
      else if (e.name === "marker.txt") {
        found.push([rel.join("/"), await Deno.readTextFile(`${dir}/${e.name}`)]);
      }
    }
  };
  await walk(root, []);
  return Object.fromEntries(found.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
}
