// The composition root, beside main.ts (lib/ never imports routes/): builds the whole server — data dir, the API
// families, the router and the HTTP server (lib/serve.ts: connection cap and timeouts around Deno's HTTP) — with a
// graceful shutdown that ends open streams, finishes in-flight requests and closes the log.

import type { Config } from "./lib/config.ts";
import { type Logger } from "./lib/log.ts";
import { type Route, Router } from "./lib/router.ts";
import type { ApiModule, AppContext } from "./lib/app.ts";
import { DataDir } from "./lib/store/mod.ts";
import { HashingQueue } from "./lib/password_hashing.ts";
import { storageSettings } from "./lib/store/storage_settings.ts";
import { envBool, envDurationMs, envInt } from "./lib/config.ts";
import { defaultMaxConnections, serve, type Serving } from "./lib/serve.ts";
import {
  HttpMetrics,
  LoginMetrics,
  MetricsRegistry,
  registerConnectionMetrics,
  registerProcessMetrics,
  registerStoreMetrics,
} from "./lib/metrics/mod.ts";
import { createRegistryApi } from "./routes/registry/mod.ts";
import { type AuthMethodsModule, createAuthMethodsApi } from "./routes/authmethods/mod.ts";
import { createEventsApi } from "./routes/events/mod.ts";
import { createServerApi } from "./routes/server/mod.ts";
import { createConsoleApi } from "./routes/console/mod.ts";
import { createTestingApi } from "./routes/testing/mod.ts";

/**
 * Collections checkpointed as packs (docs/storage.md) rather than a file per document. Tokens: one new document
 * per login, and a file per token cost more CPU than the rest of an LDAP login's storage. OIDC attempts:
 * short-lived (created, updated, deleted within minutes), up to 50,000 at once; Nomad's pending OIDC logins
 * likewise (up to 1,000). test/packed: written only by the
 * test routes (WHARF_TEST_ROUTES), so the crash test covers packs.
 */
export const packedCollections: readonly string[] = [
  "auth/tokens",
  "registry/tokens",
  "auth/oidc_attempts",
  "cluster/acl_oidc_requests",
  "test/packed",
];

export interface RunningServer {
  url: string;
  port: number;
  data: DataDir;
  /** The bounded password-hashing queue of this node (its counters, for tests and diagnostics). */
  passwordHashing: HashingQueue;
  /** Every route, in matching order (for introspection and tests). */
  routes: readonly Route[];
  /** Stops accepting, ends streams, waits for in-flight requests (up to the grace period), closes the data dir. */
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

export async function startServer(
  config: Config,
  logger: Logger,
  announce: (line: string) => void = console.log,
): Promise<RunningServer> {
  const data = await DataDir.open(config.dataDir, {
    ...storageSettings(config.env),
    checkpointMs: envDurationMs(config.env, "WHARF_CHECKPOINT_INTERVAL", 1000),
    packedCollections,
    // Unique per node: its heartbeat row (docs/scale-out.md); port 0 (a free port) is not, the process id is.
    nodeName: config.env.WHARF_NODE_NAME ??
      `${Deno.hostname()}:${config.port === 0 ? `pid-${Deno.pid}` : config.port}`,
    nodeTimeoutMs: envDurationMs(config.env, "WHARF_NODE_TIMEOUT", 30_000),
    log: {
      segmentBytes: envInt(config.env, "WHARF_EVENTS_SEGMENT_BYTES", 64 * 1024 * 1024, 1024),
      segmentIndexes: envInt(config.env, "WHARF_EVENTS_SEGMENT_INDEXES", 10_000, 1),
      retainIndexes: envInt(config.env, "WHARF_EVENTS_RETAIN_INDEXES", 100_000, 1),
      retainBytes: envInt(config.env, "WHARF_EVENTS_RETAIN_BYTES", 1024 * 1024 * 1024, 1),
      pinBytes: envInt(config.env, "WHARF_EVENTS_PIN_BYTES", 1024 * 1024 * 1024, 0),
    },
  });
  const shutdown = new AbortController();
  const passwordHashing = new HashingQueue();
  // Metrics (docs/operations.md#metrics): the router's, the storage's and the process's here; each family adds its own.
  const metrics = new MetricsRegistry();
  const httpMetrics = new HttpMetrics(metrics);
  registerStoreMetrics(metrics, data);
  const processMetrics = registerProcessMetrics(metrics);
  const ctx: AppContext = {
    config,
    data,
    logger,
    shutdownSignal: shutdown.signal,
    announce,
    passwordHashing,
    metrics,
    logins: new LoginMetrics(metrics),
  };
  let modules: ApiModule[];
  let authMethods: AuthMethodsModule | undefined;
  try {
    // The web console is built on the registry's state; the registry's /:user/:box route sends a browser asking
    // for HTML to its box page (Vagrant, asking for JSON, is not), and its downloads accept the console's session.
    // The auth methods are the registry's identity provider (docs/identity.md): built first, handed over.
    authMethods = await createAuthMethodsApi(ctx);
    const registry = await createRegistryApi(
      ctx,
      (core) => createConsoleApi(ctx, core),
      authMethods.identity,
    );
    const webConsole = registry.front;
    modules = [
      await createServerApi(ctx),
      ...(config.testRoutes ? [await createTestingApi(ctx)] : []),
      await createEventsApi(ctx),
      authMethods,
      // The web console owns /, /boxes/search, /ui/** and the HTML pages under /:user (docs/web.md#pages).
      webConsole,
      // The registry owns root paths (/:user/:box), so its routes are matched last.
      registry,
    ];
  } catch (err) {
    processMetrics.stop();
    await authMethods?.close?.();
    await data.close();
    throw err;
  }
  const routes = modules.flatMap((m) => m.routes);
  // Each module brings its family (error shape, owned paths) and steps with its routes (lib/router.ts RouteGroup).
  const router = Router.forGroups(modules, {
    logger,
    maxBodyBytes: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    // On a cluster a client sees its own writes whichever node a load balancer picks (lib/router.ts ClusterView).
    cluster: data.log.sync ? { sync: () => data.log.sync!(), index: () => data.log.lastIndex } : undefined,
    metrics: httpMetrics,
  });

  const env = config.env;
  let server: Serving;
  try {
    server = serve({
      hostname: config.host,
      port: config.port,
      logger,
      headerTimeoutMs: envDurationMs(env, "WHARF_HEADER_TIMEOUT", 10_000),
      bodyTimeoutMs: envDurationMs(env, "WHARF_BODY_TIMEOUT", 60_000),
      idleTimeoutMs: envDurationMs(env, "WHARF_IDLE_TIMEOUT", 75_000),
      maxConnections: envInt(env, "WHARF_MAX_CONNECTIONS", defaultMaxConnections(), 1),
      connectionLimits: envBool(env, "WHARF_CONNECTION_LIMITS", true),
      onError: (err) => {
        logger.error("unhandled server error", { error: String(err) });
        return new Response("Internal error", { status: 500 });
      },
    }, (request, info) => router.handle(request, info));
  } catch (err) {
    // A bad setting or the port in use: nothing is served, so close what was opened.
    processMetrics.stop();
    for (const m of modules) await m.close?.();
    await data.close();
    throw err;
  }
  const addr = server.addr;
  registerConnectionMetrics(metrics, () => server.stats());

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      shutdown.abort();
      const grace = new Promise<void>((r) => setTimeout(r, config.shutdownGraceMs));
      await Promise.race([server.shutdown(), grace]);
      server.closeAll();
      processMetrics.stop();
      for (const m of modules) await m.close?.();
      await data.close();
    })();
    return stopping;
  };
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    data,
    passwordHashing,
    routes,
    shutdown: stop,
    finished: server.finished,
  };
}
