// argon2id password hashing (PHC strings) off the event loop, in a bounded queue: beyond it, 503.

import { type Algorithm, hash, verify } from "@node-rs/argon2";
import { ApiError } from "../../lib/errors.ts";

export interface Argon2Params {
  timeCost: number;
  memoryKib: number;
  threads: number;
}

/** Boundary's defaults: t=3, m=64 MiB, p=1, 32-byte salt and key. */
export const defaultArgon2: Argon2Params = { timeCost: 3, memoryKib: 64 * 1024, threads: 1 };
/** Algorithm.Argon2id: the package exports it as a const enum, which isolated modules cannot read. */
const argon2id = 2 as unknown as Algorithm;
const keyLength = 32;
const saltLength = 32;

export class PasswordHasher {
  readonly params: Argon2Params;
  readonly #maxQueued: number;
  readonly #concurrency: number;
  #running = 0;
  #waiting: Array<() => void> = [];
  /** A hash of a random secret: unknown accounts are verified against it so they take the same time. */
  #dummy: Promise<string>;

  constructor(params: Argon2Params, options: { concurrency?: number; maxQueued?: number } = {}) {
    this.params = params;
    this.#concurrency = options.concurrency ?? Math.max(2, navigator.hardwareConcurrency || 2);
    this.#maxQueued = options.maxQueued ?? 64;
    this.#dummy = this.#raw(crypto.randomUUID());
    this.#dummy.catch(() => {});
  }

  /** A PHC string for `password` with the current parameters. */
  hash(password: string): Promise<string> {
    return this.#bounded(() => this.#raw(password));
  }

  /** Verifies `password` against `phc`, or against the dummy hash when there is none (same cost). */
  async verify(phc: string | undefined, password: string): Promise<boolean> {
    const target = phc ?? await this.#dummy;
    const ok = await this.#bounded(() => verify(target, password).catch(() => false));
    return ok && phc !== undefined;
  }

  /** Whether a stored hash was made with other parameters and should be upgraded. */
  needsRehash(phc: string): boolean {
    const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
    if (!m) return true;
    return Number(m[1]) !== this.params.memoryKib || Number(m[2]) !== this.params.timeCost ||
      Number(m[3]) !== this.params.threads;
  }

  #raw(password: string): Promise<string> {
    return hash(password, {
      algorithm: argon2id,
      timeCost: this.params.timeCost,
      memoryCost: this.params.memoryKib,
      parallelism: this.params.threads,
      outputLen: keyLength,
      salt: crypto.getRandomValues(new Uint8Array(saltLength)),
    });
  }

  async #bounded<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#concurrency) {
      if (this.#waiting.length >= this.#maxQueued) throw new ApiError(503, "Server is busy, retry later.");
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#running++;
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
