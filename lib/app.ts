// What the composition root (app.ts, beside main.ts) hands every API family, and what a family hands back.

import type { Config } from "./config.ts";
import type { Logger } from "./log.ts";
import type { HashingQueue } from "./password_hashing.ts";
import type { LoginMetrics } from "./metrics/logins.ts";
import type { MetricsRegistry } from "./metrics/registry.ts";
import type { ApiFamily, Route, RouteStep } from "./router.ts";
import type { DataDir } from "./store/mod.ts";

/** What every API family receives when it is created. */
export interface AppContext {
  config: Config;
  data: DataDir;
  logger: Logger;
  /** The node's one bounded queue for password hashes and verifications, every family's (docs/security.md). */
  passwordHashing: HashingQueue;
  /** The node's metrics, which each family registers its own into (docs/operations.md#metrics). */
  metrics: MetricsRegistry;
  /** The node's login counter, which every family that signs people in counts into. */
  logins: LoginMetrics;
  /** Aborted when shutdown begins: long-lived responses (streams) end their bodies cleanly. */
  shutdownSignal: AbortSignal;
  /** Lines meant for the operator (e.g. a generated admin password), printed to stdout. */
  announce(line: string): void;
}

/** One API family: its routes, what it answers for, and what to do at shutdown (lib/router.ts RouteGroup). */
export interface ApiModule {
  routes: Route[];
  /**
   * Its error renderer and the paths it owns. Its routes whose first segment is a parameter (`/:user`) answer
   * only paths of this family: the router never tries them for a path under a first segment it owns nothing of.
   */
  family?: ApiFamily;
  /** Steps around each of its routes' handlers (lib/router/route.ts RouteStep), outermost first. */
  steps?: readonly RouteStep[];
  close?(): Promise<void> | void;
}
