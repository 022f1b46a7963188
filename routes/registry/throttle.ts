// Sliding-window counters for login failures, two-factor attempts and code requests (memory only).

export class WindowCounter {
  readonly windowMs: number;
  readonly maxKeys: number;
  #hits = new Map<string, number[]>();

  constructor(windowMs: number, maxKeys = 100_000) {
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
  }

  #live(key: string, now: number): number[] {
    const list = (this.#hits.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (list.length) this.#hits.set(key, list);
    else this.#hits.delete(key);
    return list;
  }

  count(key: string, now = Date.now()): number {
    return this.#live(key, now).length;
  }

  add(key: string, now = Date.now()): void {
    const list = this.#live(key, now);
    list.push(now);
    if (!this.#hits.has(key) && this.#hits.size >= this.maxKeys) {
      const oldest = this.#hits.keys().next().value;
      if (oldest !== undefined) this.#hits.delete(oldest);
    }
    this.#hits.set(key, list);
  }

  /** Seconds until `key` drops below `limit` hits, or 0 when it is below already. */
  retryAfter(key: string, limit: number, now = Date.now()): number {
    const list = this.#live(key, now);
    if (list.length < limit) return 0;
    const freeing = list[list.length - limit]!;
    return Math.max(1, Math.ceil((freeing + this.windowMs - now) / 1000));
  }

  clear(key: string): void {
    this.#hits.delete(key);
  }
}
