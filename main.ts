// wharf entry point: configuration, data dir, the three API families, serve, graceful shutdown.

import { loadConfig } from "./lib/config.ts";
import { ConfigError } from "./lib/errors.ts";
import { createLogger, flushLogs } from "./lib/log.ts";
import { startServer } from "./app.ts";

async function main(): Promise<number> {
  if (Deno.args[0] === "registry") {
    // Administration commands for the box registry (users, organizations, tokens) on a stopped server's data dir.
    const { runRegistryCli, processIo } = await import("./cli/registry/mod.ts");
    return await runRegistryCli(Deno.args.slice(1), processIo());
  }
  if (Deno.args[0] === "storage") {
    // Copies an embedded data directory into PostgreSQL + S3 (docs/scale-out.md).
    const { runStorageCli } = await import("./cli/storage/mod.ts");
    return await runStorageCli(Deno.args.slice(1), Deno.env.toObject());
  }
  if (Deno.args[0] === "backup") {
    // Online backups of a running server's data dir or a cluster, their verification and restore (docs/operations.md#backups).
    const { runBackupCli, processIo } = await import("./cli/backup/mod.ts");
    return await runBackupCli(Deno.args.slice(1), Deno.env.toObject(), processIo());
  }
  let config;
  try {
    config = loadConfig(Deno.args, Deno.env.toObject());
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`wharf: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  let server;
  try {
    server = await startServer(config, logger);
  } catch (err) {
    if (
      err instanceof ConfigError || err instanceof Deno.errors.AddrInUse ||
      err instanceof Deno.errors.PermissionDenied
    ) {
      console.error(`wharf: ${err.message}`);
      return 2;
    }
    console.error(`wharf: cannot start: ${err instanceof Error ? err.message : err}`);
    return 2;
  }
  console.log(`wharf listening on ${server.url}`);
  const onSignal = () => {
    logger.info("shutting down");
    server.shutdown().then(() => {
      flushLogs();
      Deno.exit(0);
    }, (err) => {
      logger.error("shutdown failed", { error: String(err) });
      flushLogs();
      Deno.exit(1);
    });
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  // Settles only after a shutdown: lib/serve.ts retries accept errors (EMFILE) and serves on instead of rejecting,
  // so connection pressure never ends the process.
  await server.finished;
  return 0;
}

const code = await main();
if (code !== 0) Deno.exit(code);
