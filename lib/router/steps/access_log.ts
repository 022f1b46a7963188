// Request step: one JSON access-log line per request, timed only when the log takes access lines.

import type { Logger } from "../../log.ts";

export class AccessLog {
  #logger: Logger;
  /** Whether requests are timed: only for the access log (each clock read costs ~0.15 µs here). */
  #timed: boolean;

  constructor(logger: Logger) {
    this.#logger = logger;
    this.#timed = logger.logsAccess;
  }

  /** When the request started (0 when untimed). */
  start(): number {
    return this.#timed ? performance.now() : 0;
  }

  /** The request's line; `path` is the path as logged (secret parameters redacted). */
  write(sequence: number, method: string, path: string, status: number, started: number): void {
    const ended = this.#timed ? performance.now() : 0;
    this.#logger.access(sequence, method, path, status, started, ended);
  }
}
