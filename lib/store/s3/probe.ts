// Whether the object store answers, for /health: one cheap request (HeadBucket) at most every few seconds, its
// answer cached, and never waited on longer than a bound (a store that hangs is reported down meanwhile).

export interface ProbeOptions {
  /** A fresh answer is reused this long. */
  cacheMs: number;
  /** /health waits at most this long for a probe in flight. */
  waitMs: number;
}

export class ObjectStoreProbe {
  readonly #check: (signal: AbortSignal) => Promise<void>;
  readonly #options: ProbeOptions;
  #answer: { up: boolean; at: number } | undefined;
  #inFlight: Promise<boolean> | undefined;

  /** `check` resolves when the store answered (any answer that is not an outage), rejects otherwise. */
  constructor(check: (signal: AbortSignal) => Promise<void>, options: ProbeOptions) {
    this.#check = check;
    this.#options = options;
  }

  /** When the last probe answered (0: never), up or down. */
  get answeredAt(): number {
    return this.#answer?.at ?? 0;
  }

  /** Whether the store is up: the cached answer while fresh, else a probe bounded by waitMs. */
  async up(): Promise<boolean> {
    const cached = this.#answer;
    if (cached && Date.now() - cached.at < this.#options.cacheMs) return cached.up;
    this.#inFlight ??= this.#probe().finally(() => (this.#inFlight = undefined));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((
      resolve,
    ) => (timer = setTimeout(() => resolve(false), this.#options.waitMs)));
    try {
      return await Promise.race([this.#inFlight, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #probe(): Promise<boolean> {
    // The request itself is abandoned a little after /health stopped waiting, so probes never pile up.
    const signal = AbortSignal.timeout(this.#options.waitMs * 2);
    let up: boolean;
    try {
      await this.#check(signal);
      up = true;
    } catch {
      up = false;
    }
    this.#answer = { up, at: Date.now() };
    return up;
  }
}
