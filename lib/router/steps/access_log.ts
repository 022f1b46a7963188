// Request step: one JSON access-log line per request, timed only when the log takes access lines or the router
// keeps metrics.

import type { Logger } from "../../log.ts";

export class AccessLog {
  #logger: Logger;
  /** Whether requests are timed: for the access log or metrics only (each clock read costs ~0.15 µs here). */
  readonly timed: boolean;

  constructor(logger: Logger, metrics: boolean) {
    this.#logger = logger;
    this.timed = logger.logsAccess || metrics;
  }

  /** The clock a request's start and end are read from (0 when untimed). */
  now(): number {
    return this.timed ? performance.now() : 0;
  }

  /** The request's line; `path` is the path as logged (secret parameters redacted). */
  write(
    sequence: number,
    method: string,
    path: string,
    status: number,
    started: number,
    ended: number,
  ): void {
    this.#logger.access(sequence, method, path, status, started, ended);
  }
}
