// Request step: one JSON access-log line per request, its path's secrets redacted, timed only when the log takes
// access lines or the router keeps metrics.

import type { Logger } from "../../log.ts";
import type { SecretPathRedactor } from "../../secret_paths.ts";

export class AccessLog {
  #logger: Logger;
  #secretPaths: SecretPathRedactor;
  /** Whether requests are timed: for the access log or metrics only (each clock read costs ~0.15 µs here). */
  readonly timed: boolean;

  constructor(logger: Logger, metrics: boolean, secretPaths: SecretPathRedactor) {
    this.#logger = logger;
    this.#secretPaths = secretPaths;
    this.timed = logger.logsAccess || metrics;
  }

  /** The clock a request's start and end are read from (0 when untimed). */
  now(): number {
    return this.timed ? performance.now() : 0;
  }

  /** The request's line, when the log takes access lines; `path` is the request's, redacted here (secrets). */
  write(
    sequence: number,
    method: string,
    path: string,
    status: number,
    started: number,
    ended: number,
  ): void {
    if (!this.#logger.logsAccess) return;
    this.#logger.access(sequence, method, this.#secretPaths.redact(path), status, started, ended);
  }
}
