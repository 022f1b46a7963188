// One wharf after another on the same data dir, each a child process, for tests of what survives a restart or a
// kill; what every server printed is kept for the tests' secrets checks.

import { type ChildServer, spawnServer } from "./server.ts";

export class SuccessiveServers {
  server!: ChildServer;
  /** Everything every stopped server printed. */
  output = "";
  constructor(readonly dir: string, readonly baseEnv: Record<string, string> = {}) {}

  /** Starts the next server with baseEnv and `env`. */
  async start(env: Record<string, string> = {}): Promise<ChildServer> {
    this.server = await spawnServer(this.dir, { ...this.baseEnv, ...env });
    return this.server;
  }

  /** Ends the current server by `signal` and keeps what it printed. */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<void> {
    this.server.kill(signal);
    await this.server.status;
    this.output += this.server.stdout() + this.server.stderr();
  }
}
