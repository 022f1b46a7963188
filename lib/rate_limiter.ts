// Token buckets per key (a token, a client address) in memory, bounded in the keys they remember.

export class RateLimiter {
  readonly #rps: number;
  readonly #burst: number;
  readonly #maxBuckets: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(rps: number, burst: number, maxBuckets = 100_000) {
    this.#rps = rps;
    this.#burst = Math.max(1, burst);
    this.#maxBuckets = maxBuckets;
  }

  get enabled(): boolean {
    return this.#rps > 0;
  }

  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait. */
  /** Requests refused since start (for metrics). */
  refusals = 0;

  take(key: string, at = performance.now()): number {
    if (!this.enabled) return 0;
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-inserted below: the map stays in least-recently-used order
      bucket.tokens = Math.min(this.#burst, bucket.tokens + ((at - bucket.at) / 1000) * this.#rps);
      bucket.at = at;
    } else {
      if (this.#buckets.size >= this.#maxBuckets) this.#evict(at);
      bucket = { tokens: this.#burst, at };
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    this.refusals++;
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rps));
  }

  /** Drops full (idle) buckets, and the least recently used ones if that is not enough. */
  #evict(at: number): void {
    for (const [k, b] of this.#buckets) {
      if (b.tokens + ((at - b.at) / 1000) * this.#rps >= this.#burst) this.#buckets.delete(k);
    }
    while (this.#buckets.size >= this.#maxBuckets) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest === undefined) break;
      this.#buckets.delete(oldest);
    }
  }
}
