// Drives the real vagrant 2.3.4 CLI and the vagrant_cloud gem against a test server, isolated from the
// user's home and the internet; detects whether those clients are installed so tests can skip cleanly.

export interface ClientRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout + stderr, for messages and assertions on text the CLI may print on either. */
  output: string;
}

const decoder = new TextDecoder();

async function run(cmd: string, args: string[], options: Deno.CommandOptions = {}): Promise<ClientRun> {
  try {
    const out = await new Deno.Command(cmd, { ...options, args, stdin: "null" }).output();
    const stdout = decoder.decode(out.stdout);
    const stderr = decoder.decode(out.stderr);
    return { code: out.code, stdout, stderr, output: stdout + stderr };
  } catch (error) {
    return { code: 127, stdout: "", stderr: String(error), output: String(error) };
  }
}

/** Why the vagrant CLI tests cannot run here, or undefined when they can. */
export async function vagrantMissing(): Promise<string | undefined> {
  const version = await run("vagrant", ["--version"], { env: { VAGRANT_CHECKPOINT_DISABLE: "1" } });
  if (version.code !== 0) return "the `vagrant` command is not installed";
  if (!/Vagrant 2\./.test(version.stdout)) return `unexpected vagrant version: ${version.stdout.trim()}`;
  for (const tool of ["curl", "tar"]) {
    if ((await run(tool, ["--version"])).code !== 0) return `\`${tool}\` is not installed (vagrant needs it)`;
  }
  return undefined;
}

/** Why the gem tests cannot run here, or undefined when they can. */
export async function gemMissing(): Promise<string | undefined> {
  // Not VagrantCloud::VERSION: Debian's package lacks the version.txt it reads.
  const probe = await run("ruby", ["-e", 'require "vagrant_cloud"; print VagrantCloud::Account.name']);
  if (probe.code === 127) return "`ruby` is not installed";
  if (probe.code !== 0) return "the vagrant_cloud gem (ruby-vagrant-cloud) is not installed";
  return undefined;
}

/** Prints why a client suite is skipped, so the skip is visible in CI logs. */
export function explainSkip(suite: string, reason: string | undefined): boolean {
  if (reason) console.log(`skipping ${suite}: ${reason}`);
  return reason !== undefined;
}

/** An isolated vagrant installation state: its own VAGRANT_HOME, HOME and working directory. */
export class VagrantSandbox {
  private constructor(
    readonly root: string,
    readonly serverUrl: string,
    private readonly plugins: boolean,
    readonly command: string,
  ) {}

  /**
   * `plugins`: load system plugins such as Debian's vagrant-libvirt (off by default: faster, fewer surprises).
   * `command`: the vagrant executable (default Debian's `vagrant`; ../shared/clients/vagrant24 for 2.4.9).
   */
  static async create(
    serverUrl: string,
    options: { plugins?: boolean; command?: string } = {},
  ): Promise<VagrantSandbox> {
    const root = await Deno.makeTempDir({ prefix: "wharf-vagrant-" });
    await Deno.mkdir(`${root}/home`);
    await Deno.mkdir(`${root}/vagrant.d`);
    await Deno.mkdir(`${root}/work`);
    return new VagrantSandbox(root, serverUrl, options.plugins ?? false, options.command ?? "vagrant");
  }

  get vagrantHome(): string {
    return `${this.root}/vagrant.d`;
  }

  get workDir(): string {
    return `${this.root}/work`;
  }

  /** Environment that keeps vagrant local: no checkpoint, no plugins, no proxies, no real home. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: `${this.root}/home`,
      LANG: "C.UTF-8",
      VAGRANT_HOME: this.vagrantHome,
      VAGRANT_CWD: this.workDir,
      VAGRANT_SERVER_URL: this.serverUrl,
      VAGRANT_CHECKPOINT_DISABLE: "1",
      VAGRANT_DISABLE_VBOXSYMLINKCREATE: "1",
      ...(this.plugins ? {} : { VAGRANT_NO_PLUGINS: "1" }),
      VAGRANT_NO_COLOR: "1",
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      ...extra,
    };
  }

  /** Runs `vagrant ARGS` in the sandbox (token only through `extraEnv` or the stored login file). */
  vagrant(args: string[], extraEnv: Record<string, string> = {}): Promise<ClientRun> {
    return run(this.command, args, { cwd: this.workDir, env: this.env(extraEnv), clearEnv: true });
  }

  /**
   * Runs `vagrant ARGS` in a pseudo-terminal (util-linux `script`), typing each answer once the
   * prompt before it has appeared; vagrant reads passwords only from a terminal.
   */
  async vagrantInTerminal(
    args: string[],
    answers: Array<{ after: RegExp; type: string }>,
    timeoutMs = 60_000,
  ): Promise<ClientRun> {
    const commandLine = [this.command, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const child = new Deno.Command("script", {
      args: ["-qec", commandLine, "/dev/null"],
      cwd: this.workDir,
      env: this.env(),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    let output = "";
    let next = 0;
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const readErr = new Response(child.stderr).text();
    try {
      for await (const chunk of child.stdout) {
        output += decoder.decode(chunk, { stream: true });
        const answer = answers[next];
        if (answer && answer.after.test(output)) {
          next++;
          await writer.write(new TextEncoder().encode(`${answer.type}\n`));
        }
      }
    } finally {
      clearTimeout(timer);
      await writer.close().catch(() => {});
    }
    const status = await child.status;
    const stderr = await readErr;
    return { code: status.code, stdout: output, stderr, output: output + stderr };
  }

  async storedLoginToken(): Promise<string | undefined> {
    try {
      return (await Deno.readTextFile(`${this.vagrantHome}/data/vagrant_login_token`)).trim();
    } catch {
      return undefined;
    }
  }

  /** Versions of USER/BOX installed for a provider, from vagrant's box directory layout. */
  async installedVersions(tag: string, provider = "virtualbox"): Promise<string[]> {
    const dir = `${this.vagrantHome}/boxes/${tag.replaceAll("/", "-VAGRANTSLASH-")}`;
    const versions: string[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (!entry.isDirectory) continue;
        try {
          await Deno.stat(`${dir}/${entry.name}/${provider}/metadata.json`);
          versions.push(entry.name);
        } catch {
          // a version directory without this provider
        }
      }
    } catch {
      return [];
    }
    return versions.sort();
  }

  async remove(): Promise<void> {
    await Deno.remove(this.root, { recursive: true }).catch(() => {});
  }
}

/** Runs a Ruby script with the vagrant_cloud gem; `env` reaches the script as ENV. */
export function runRuby(script: string, env: Record<string, string>): Promise<ClientRun> {
  return run("ruby", ["-e", script], {
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      LANG: "C.UTF-8",
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      ...env,
    },
    clearEnv: true,
  });
}

/**
 * Writes a minimal valid .box (gzipped tar of metadata.json, a Vagrantfile and a filler disk) of
 * roughly `fillerBytes` and returns its path. Random filler makes every box a distinct blob.
 */
export async function buildBoxFile(
  dir: string,
  name: string,
  options: { fillerBytes?: number; provider?: string } = {},
): Promise<string> {
  const fillerBytes = options.fillerBytes ?? 64 * 1024;
  const src = await Deno.makeTempDir({ dir, prefix: "boxsrc-" });
  await Deno.writeTextFile(
    `${src}/metadata.json`,
    JSON.stringify({ provider: options.provider ?? "virtualbox" }),
  );
  await Deno.writeTextFile(`${src}/Vagrantfile`, 'Vagrant.configure("2") { |config| }\n');
  const filler = new Uint8Array(fillerBytes);
  for (let offset = 0; offset < filler.length; offset += 65536) {
    crypto.getRandomValues(filler.subarray(offset, Math.min(offset + 65536, filler.length)));
  }
  await Deno.writeFile(`${src}/box-disk1.vmdk`, filler);
  const path = `${dir}/${name}`;
  const tar = await run("tar", ["-czf", path, "-C", src, "metadata.json", "Vagrantfile", "box-disk1.vmdk"]);
  if (tar.code !== 0) throw new Error(`tar failed: ${tar.output}`);
  await Deno.remove(src, { recursive: true });
  return path;
}

/** Formats a client run for an assertion message. */
export function describeRun(label: string, result: ClientRun): string {
  return `${label} exited ${result.code}\n--- output ---\n${result.output.slice(-4000)}`;
}

/** `cmd("cloud publish acme/devbox 1.0.0", file, "-f")`: the first part split on spaces, the rest verbatim. */
export function cmd(words: string, ...verbatim: string[]): string[] {
  return [...words.split(" "), ...verbatim];
}
