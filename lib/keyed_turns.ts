// One caller at a time per key, in arrival order (say an account's password writes, so a later caller sees what
// the earlier one committed); the waiting callers are bounded per key and in all, and an idle key is forgotten.

import { ApiError } from "./errors.ts";

export interface KeyedTurnsOptions {
  /** Callers waiting on one key at most; one more is refused with 503. */
  maxWaitingPerKey?: number;
  /** Callers waiting on all keys together at most; one more is refused with 503. */
  maxWaiting?: number;
}

export class KeyedTurns {
  readonly maxWaitingPerKey: number;
  readonly maxWaiting: number;
  /** The keys with a caller running; each with the wake-ups of its waiting callers, in arrival order. */
  #lines = new Map<string, Array<() => void>>();
  #waiting = 0;

  constructor(options: KeyedTurnsOptions = {}) {
    this.maxWaitingPerKey = Math.max(0, options.maxWaitingPerKey ?? 1024);
    this.maxWaiting = Math.max(0, options.maxWaiting ?? 10_000);
  }

  /** Keys with a caller running or waiting (idle keys are not kept). */
  get keyCount(): number {
    return this.#lines.size;
  }

  /** Callers waiting for their turn, all keys together. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Runs `work` once every earlier caller of `key` has finished; 503 when the line is full. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let line = this.#lines.get(key);
    if (!line) {
      line = [];
      this.#lines.set(key, line);
    } else {
      if (line.length >= this.maxWaitingPerKey || this.#waiting >= this.maxWaiting) {
        throw new ApiError(503, "Server is busy, retry later.", { headers: { "Retry-After": "1" } });
      }
      this.#waiting++;
      await new Promise<void>((wake) => line!.push(wake));
    }
    try {
      return await work();
    } finally {
      const next = line.shift();
      if (next) {
        this.#waiting--;
        next();
      } else this.#lines.delete(key);
    }
  }
}
