// argon2id password hashing (PHC strings) off the event loop, through one bounded queue per node that every API
// family's hasher shares: a few hashes at a time, a bounded line waiting, beyond it 503 (docs/security.md).

import { type Algorithm, hash, verify } from "@node-rs/argon2";
import { ApiError } from "./errors.ts";

export interface Argon2Params {
  timeCost: number;
  memoryKib: number;
  threads: number;
}

/** Algorithm.Argon2id: the package exports it as a const enum, which isolated modules cannot read. */
const argon2id = 2 as unknown as Algorithm;
const keyLength = 32;
const saltLength = 32;

export interface HashingQueueOptions {
  /** Hashes running at once; default one per core, at least 2. */
  concurrency?: number;
  /** Hashes waiting at most; one more is refused with 503. */
  maxWaiting?: number;
}

/** The bounded queue every password hash and verification of a node goes through. */
export class HashingQueue {
  readonly concurrency: number;
  readonly maxWaiting: number;
  #running = 0;
  #waiting: Array<() => void> = [];
  #peakRunning = 0;
  #refused = 0;
  #completed = 0;

  constructor(options: HashingQueueOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? Math.max(2, navigator.hardwareConcurrency || 2));
    this.maxWaiting = Math.max(0, options.maxWaiting ?? 64);
  }

  /** Hashes running now. */
  get running(): number {
    return this.#running;
  }
  /** Hashes waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }
  /** The most hashes that ever ran at once (never above `concurrency`). */
  get peakRunning(): number {
    return this.#peakRunning;
  }
  /** Hashes refused with 503 so far. */
  get refused(): number {
    return this.#refused;
  }
  /** Hashes run so far (finished or failed). */
  get completed(): number {
    return this.#completed;
  }

  /** Runs `work` (one hash) when a slot is free; 503 at once when the line is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.maxWaiting) {
        this.#refused++;
        throw new ApiError(503, "Server is busy, retry later.", { headers: { "Retry-After": "1" } });
      }
      // The finishing holder hands its slot over: #running stays counted for the woken caller.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
      this.#peakRunning = Math.max(this.#peakRunning, this.#running);
    }
    try {
      return await work();
    } finally {
      this.#completed++;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/** One family's argon2id parameters over the shared queue. */
export class PasswordHasher {
  readonly params: Argon2Params;
  readonly queue: HashingQueue;
  /** A hash of a random secret, made in the first slot that needs it: unknown logins verify against it. */
  #dummy: Promise<string> | undefined;

  constructor(params: Argon2Params, queue: HashingQueue) {
    this.params = params;
    this.queue = queue;
  }

  /** A PHC string for `password` with the current parameters. */
  hash(password: string): Promise<string> {
    return this.queue.run(() => this.#raw(password));
  }

  /** Verifies `password` against `phc`, or against the dummy hash when there is none (same cost). */
  async verify(phc: string | undefined, password: string): Promise<boolean> {
    const ok = await this.queue.run(async () => {
      const target = phc ?? await this.#dummyHash();
      return await verify(target, password).catch(() => false);
    });
    return ok && phc !== undefined;
  }

  /** Makes the dummy hash now, in a slot of the queue, so the first unknown login costs what the others do. */
  warmUp(): void {
    this.queue.run(() => this.#dummyHash()).catch(() => {});
  }

  /** Whether a stored hash was made with other parameters and should be upgraded. */
  needsRehash(phc: string): boolean {
    const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
    if (!m) return true;
    return Number(m[1]) !== this.params.memoryKib || Number(m[2]) !== this.params.timeCost ||
      Number(m[3]) !== this.params.threads;
  }

  #dummyHash(): Promise<string> {
    if (!this.#dummy) {
      const made = this.#raw(crypto.randomUUID());
      this.#dummy = made;
      // A failed attempt is not kept: the next unknown login makes it again.
      made.catch(() => {
        if (this.#dummy === made) this.#dummy = undefined;
      });
    }
    return this.#dummy;
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
}
