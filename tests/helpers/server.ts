// Test harness: a real wharf server on 127.0.0.1 port 0 with a temp data dir, in-process or as a child.

import { loadConfig } from "../../lib/config.ts";
import { createLogger } from "../../lib/log.ts";
import { type RunningServer, startServer } from "../../app.ts";
import { testStorageEnv } from "./storage_backend.ts";

export interface TestServer {
  url: string;
  dataDir: string;
  /** The WHARF_* settings it runs with, storage backends included: start it again with these and dataDir. */
  env: Record<string, string>;
  server: RunningServer;
  /** Lines the server announced on stdout (e.g. a generated admin password). */
  announced: string[];
  /** Shuts down and, unless keepData, removes the data dir. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** Stops and starts again on the same data dir (a clean restart). */
  restart(): Promise<TestServer>;
}

/** What a test reads of a server besides its answers. */
export interface TestServerOptions {
  /** Every log line (debug level and up, access lines included) is appended here instead of stderr. */
  logLines?: string[];
}

/**
 * Starts a server in this process. `env` adds WHARF_* settings; the data dir is fresh unless given; with
 * `options.logLines`, its log at debug level is collected there (a restart keeps collecting).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir?: string,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const dir = dataDir ?? await Deno.makeTempDir({ prefix: "wharf-test-" });
  // WHARF_TEST_STORAGE runs the same suites on PostgreSQL (+ S3); a restart keeps its database.
  if (!dataDir) env = { ...await testStorageEnv(), ...env };
  const config = loadConfig(["--port", "0", "--data-dir", dir, "--log-level", "error"], {
    WHARF_SHUTDOWN_GRACE: "2s",
    ...env,
  });
  const announced: string[] = [];
  const { logLines } = options;
  const logger = logLines ? createLogger("debug", (line) => logLines.push(line)) : createLogger("error");
  const server = await startServer(config, logger, (line) => announced.push(line));
  const self: TestServer = {
    url: server.url,
    dataDir: dir,
    env,
    server,
    announced,
    async stop(options = {}) {
      await server.shutdown();
      if (!options.keepData) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
    async restart() {
      await server.shutdown();
      return await startTestServer(env, dir, options);
    },
  };
  return self;
}

export interface ChildServer {
  url: string;
  process: Deno.ChildProcess;
  /** Everything the child printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  kill(signal?: Deno.Signal): void;
  status: Promise<Deno.CommandStatus>;
}

const mainPath = new URL("../../main.ts", import.meta.url).pathname;

/**
 * Starts `deno run main.ts` as a child process and waits for its "wharf listening on" line. `main`: another
 * checkout's main.ts (the benchmarks compare two revisions). `denoFlags`: before the script (e.g. `--v8-flags=…`).
 */
export async function spawnServer(
  dataDir: string,
  env: Record<string, string> = {},
  extraArgs: string[] = [],
  main = mainPath,
  denoFlags: string[] = [],
): Promise<ChildServer> {
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...denoFlags,
      main,
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--log-level",
      "warn",
      ...extraArgs,
    ],
    env: { WHARF_SHUTDOWN_GRACE: "2s", ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  });
  const process = command.spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const listening = new Promise<string>((resolve, reject) => {
    (async () => {
      for await (const chunk of process.stdout) {
        out += decoder.decode(chunk, { stream: true });
        const m = /wharf listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      }
      reject(new Error(`server exited before listening; stderr: ${err.slice(-2000)}`));
    })().catch(reject);
  });
  (async () => {
    for await (const chunk of process.stderr) err += decoder.decode(chunk, { stream: true });
  })().catch(() => {});
  const url = await withTimeout(listening, 30_000, "server did not start within 30 s");
  return {
    url,
    process,
    stdout: () => out,
    stderr: () => err,
    kill: (signal: Deno.Signal = "SIGTERM") => {
      try {
        process.kill(signal);
      } catch {
        // already exited
      }
    },
    status: process.status,
  };
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
