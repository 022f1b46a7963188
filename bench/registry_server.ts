// A wharf child process with a registry user and token, in a temp dir, for the registry benchmark scenarios.

import { type ChildServer, spawnServer } from "../tests/helpers/server.ts";
import { ADMIN_PASSWORD, RegistryApi } from "../tests/registry_clients/registry_api.ts";

export interface BenchRegistry {
  server: ChildServer;
  api: RegistryApi;
  /** Token of "alice", who owns every benchmark box. */
  token: string;
  dir: string;
  close(): Promise<void>;
}

/** A registry child of this checkout, or of the checkout whose main.ts is `main`. */
export async function startBenchRegistry(
  env: Record<string, string> = {},
  main?: string,
): Promise<BenchRegistry> {
  const benchDir = Deno.env.get("BENCH_DIR");
  const dir = await Deno.makeTempDir({
    prefix: "wharf-bench-registry-",
    ...(benchDir ? { dir: benchDir } : {}),
  });
  const server = await spawnServer(
    `${dir}/data`,
    {
      WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      WHARF_RATE_LIMIT_RPS: "0",
      ...env,
    },
    [],
    main,
  );
  const close = async () => {
    server.kill("SIGTERM");
    await server.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const api = new RegistryApi(server.url);
    const adminToken = await api.login("admin", ADMIN_PASSWORD);
    await api.createUser(adminToken, "alice", "alice-password-1");
    const token = await api.login("alice", "alice-password-1");
    return { server, api, token, dir, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Peak resident set (VmHWM) of a process, MiB. */
export function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Runs a shell command and returns its wall time in seconds. */
export async function timeShell(command: string): Promise<number> {
  const started = performance.now();
  const out = await new Deno.Command("sh", { args: ["-c", command], stdout: "piped", stderr: "piped" })
    .output();
  if (out.code !== 0) throw new Error(`${command}: ${new TextDecoder().decode(out.stderr)}`);
  return (performance.now() - started) / 1000;
}

/** alice/bigbox 1.0.0 with a hosted virtualbox provider (not yet uploaded): what the transfer scenarios fill. */
export async function createBigBox(api: RegistryApi, token: string): Promise<string> {
  const B = "/api/v1/box/alice/bigbox";
  await api.expectOk("POST", "/api/v1/boxes", {
    token,
    body: { username: "alice", name: "bigbox", is_private: false },
  });
  await api.expectOk("POST", `${B}/versions`, { token, body: { version: { version: "1.0.0" } } });
  await api.expectOk("POST", `${B}/version/1.0.0/providers`, {
    token,
    body: { provider: { name: "virtualbox" } },
  });
  return B;
}
