// One caller at a time per key, in arrival order (say an account's password writes, so a later caller sees what
// the earlier one committed): the store's named mutexes (store/locks.ts) with the waiting callers bounded per key
// and in all; an idle key is forgotten.

import { ApiError } from "./errors.ts";
import { KeyedLocks } from "./store/locks.ts";

export interface KeyedTurnsOptions {
  /** Callers waiting on one key at most; one more is refused with 503. */
  maxWaitingPerKey?: number;
  /** Callers waiting on all keys together at most; one more is refused with 503. */
  maxWaiting?: number;
}

export class KeyedTurns {
  readonly maxWaitingPerKey: number;
  readonly maxWaiting: number;
  readonly #locks = new KeyedLocks();
  /** Callers running or waiting, per key with any. */
  readonly #callers = new Map<string, number>();
  #waiting = 0;

  constructor(options: KeyedTurnsOptions = {}) {
    this.maxWaitingPerKey = Math.max(0, options.maxWaitingPerKey ?? 1024);
    this.maxWaiting = Math.max(0, options.maxWaiting ?? 10_000);
  }

  /** Keys with a caller running or waiting (idle keys are not kept). */
  get keyCount(): number {
    return this.#callers.size;
  }

  /** Callers waiting for their turn, all keys together. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Runs `work` once every earlier caller of `key` has finished; 503 when the line is full. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const ahead = this.#callers.get(key) ?? 0;
    if (ahead > 0 && (ahead - 1 >= this.maxWaitingPerKey || this.#waiting >= this.maxWaiting)) {
      throw new ApiError(503, "Server is busy, retry later.", { headers: { "Retry-After": "1" } });
    }
    this.#callers.set(key, ahead + 1);
    if (ahead > 0) this.#waiting++;
    const release = await this.#locks.acquire([key]);
    if (ahead > 0) this.#waiting--;
    try {
      return await work();
    } finally {
      release();
      const left = this.#callers.get(key)! - 1;
      if (left === 0) this.#callers.delete(key);
      else this.#callers.set(key, left);
    }
  }
}
