// An AppContext over a fresh temp data dir, for tests that build one API module without an HTTP server.

import type { AppContext } from "../../lib/app.ts";
import { loadConfig } from "../../lib/config.ts";
import { createLogger } from "../../lib/log.ts";
import { HashingQueue } from "../../lib/password_hashing.ts";
import { LoginMetrics } from "../../lib/metrics/logins.ts";
import { MetricsRegistry } from "../../lib/metrics/registry.ts";
import { DataDir } from "../../lib/store/mod.ts";

/** Runs `fn` with a context whose data dir is removed afterwards; `env` adds WHARF_* settings. */
export async function withAppContext(
  env: Record<string, string>,
  fn: (app: AppContext) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "wharf-test-" });
  const data = await DataDir.open(dir, { checkpointMs: 60_000 });
  const shutdown = new AbortController();
  const metrics = new MetricsRegistry();
  try {
    await fn({
      config: loadConfig(["--port", "0", "--data-dir", dir], env),
      data,
      logger: createLogger("error"),
      passwordHashing: new HashingQueue(),
      metrics,
      logins: new LoginMetrics(metrics),
      shutdownSignal: shutdown.signal,
      announce: () => {},
    });
  } finally {
    shutdown.abort();
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
}
