// What the composition root (app.ts, beside main.ts) hands every API family, and what a family hands back.

import type { Config } from "./config.ts";
import type { Logger } from "./log.ts";
import type { HashingQueue } from "./password_hashing.ts";
import type { Route } from "./router.ts";
import type { DataDir } from "./store/mod.ts";

/** What every API family receives when it is created. */
export interface AppContext {
  config: Config;
  data: DataDir;
  logger: Logger;
  /** The node's one bounded queue for password hashes and verifications, every family's (docs/security.md). */
  passwordHashing: HashingQueue;
  /** Aborted when shutdown begins: long-lived responses (streams) end their bodies cleanly. */
  shutdownSignal: AbortSignal;
  /** Lines meant for the operator (e.g. a generated admin password), printed to stdout. */
  announce(line: string): void;
}

/** One API family: its routes, and what to do at shutdown. */
export interface ApiModule {
  routes: Route[];
  close?(): Promise<void> | void;
}
