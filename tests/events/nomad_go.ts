// Builds and runs a Go program of tests/events/nomad_go/<name>/ against the real Nomad `api` client sources of
// the conformance kit (GOPATH mode, no module downloads), and reports its OK/FAIL check lines.

import { assertEquals } from "../helpers/assert.ts";
import { testStorageEnv } from "../helpers/storage_backend.ts";
import { spawnEventsServer } from "./stream_helpers.ts";

/** The checkout, with a trailing slash. */
const repoRoot = decodeURIComponent(new URL("../..", import.meta.url).pathname);
const apiPackage = "go/src/github.com/hashicorp/nomad/api/acl.go";

/** One check line a program printed: `OK <name>\t<detail>` or `FAIL <name>\t<detail>`. */
export interface GoCheck {
  ok: boolean;
  name: string;
  line: string;
}

export interface GoRun {
  code: number;
  stdout: string;
  stderr: string;
  checks: GoCheck[];
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The conformance kit: WHARF_CONFORMANCE_KIT, else `shared/conformance` beside the checkout or one of its
 * parents (as .ci/conformance.sh finds ../shared/conformance).
 */
export function nomadGoKit(): string | undefined {
  const given = Deno.env.get("WHARF_CONFORMANCE_KIT");
  if (given) return exists(`${given}/${apiPackage}`) ? given : undefined;
  let dir = repoRoot.replace(/\/+$/, "");
  for (let i = 0; i < 4 && dir; i++) {
    dir = dir.slice(0, dir.lastIndexOf("/"));
    const kit = `${dir}/shared/conformance`;
    if (exists(`${kit}/${apiPackage}`)) return kit;
  }
  return undefined;
}

function goInstalled(): boolean {
  try {
    return new Deno.Command("go", { args: ["version"], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

/** Why the Go programs cannot run here (no kit, no Go), or undefined when they can. */
export const nomadGoMissing: string | undefined = !nomadGoKit()
  ? "the conformance kit (shared/conformance) is not found"
  : !goInstalled()
  ? "go is not installed"
  : undefined;

/** The build cache outlives one run (like the kit's), in the temporary folder: the kit itself is read-only. */
function goCache(): string {
  const tmp = Deno.env.get("TMPDIR") || "/tmp";
  return `${tmp}/wharf-nomad-go-cache-${Deno.uid() ?? "user"}`;
}

const built = new Map<string, Promise<string>>();

/** Builds tests/events/nomad_go/<name> once per process; resolves to the binary's path. */
export function buildNomadGoProgram(name: string): Promise<string> {
  if (!/^[a-z0-9_-]+$/.test(name)) throw new Error(`bad Go program name ${name}`);
  let binary = built.get(name);
  if (!binary) {
    binary = build(name);
    built.set(name, binary);
  }
  return binary;
}

async function build(name: string): Promise<string> {
  const kit = nomadGoKit();
  if (!kit) throw new Error("conformance kit not found");
  const out = await Deno.makeTempDir({ prefix: `wharf-nomad-go-${name}-` });
  const binary = `${out}/${name}`;
  const env: Record<string, string> = {
    GO111MODULE: "off",
    GOPATH: `${kit}/go`,
    GOFLAGS: "",
    GOTOOLCHAIN: "local",
    CGO_ENABLED: "0",
    GOCACHE: goCache(),
  };
  const result = await new Deno.Command("go", {
    args: ["build", "-trimpath", "-o", binary, "."],
    cwd: `${repoRoot}tests/events/nomad_go/${name}`,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    const text = new TextDecoder().decode(result.stderr);
    throw new Error(`go build of ${name} failed:\n${text}`);
  }
  return binary;
}

/** Builds (once) and runs program `name` with `args`; never throws for a failing program, only for a build. */
export async function runNomadGoProgram(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<GoRun> {
  const binary = await buildNomadGoProgram(name);
  const child = new Deno.Command(binary, { args, env, stdout: "piped", stderr: "piped" }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const result = await child.output();
    const stdout = new TextDecoder().decode(result.stdout);
    const checks = stdout.split("\n").flatMap((line): GoCheck[] => {
      const m = /^(OK|FAIL) ([^\t]+)/.exec(line);
      return m ? [{ ok: m[1] === "OK", name: (m[2] ?? "").trim(), line }] : [];
    });
    return { code: result.code, stdout, stderr: new TextDecoder().decode(result.stderr), checks };
  } finally {
    clearTimeout(timer);
  }
}

/** Every check passed, the program exited 0, and all `count` checks ran (a crash half-way prints fewer lines). */
export function assertAllChecksPassed(run: GoRun, count: number): void {
  const failed = run.checks.filter((c) => !c.ok).map((c) => c.line);
  assertEquals(failed, [], run.stdout + run.stderr);
  assertEquals(run.code, 0, run.stdout + run.stderr);
  assertEquals(run.checks.length, count, run.stdout);
}

/** Removes the built binaries of this process (call once at the end of a test file). */
export async function removeNomadGoBuilds(): Promise<void> {
  for (const binary of built.values()) {
    const path = await binary.catch(() => undefined);
    if (path) await Deno.remove(path.slice(0, path.lastIndexOf("/")), { recursive: true }).catch(() => {});
  }
  built.clear();
}

/**
 * A bootstrapped wharf (stream_helpers.ts rootSecret) on this pass's storage, as a child process: a Go program's
 * keep-alive connections close as it exits, and an in-process server stopped in that moment can trip over one.
 */
export async function startServerForGo(
  env: Record<string, string> = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const { server, stop } = await spawnEventsServer("wharf-nomad-go-", { ...await testStorageEnv(), ...env });
  return { url: server.url, stop };
}
