// Login throttling in memory: failures per (method, login name) and per client IP inside a window lock
// the key for a while; locked keys get 429 with Retry-After, even with the right password.

import { ApiError } from "../../lib/errors.ts";

export interface ThrottleSettings {
  nameThreshold: number;
  ipThreshold: number;
  windowMs: number;
  lockMs: number;
}

interface KeyState {
  failures: number[];
  lockedUntil: number;
}

const maxTrackedKeys = 100_000;

export class LoginThrottle {
  readonly settings: ThrottleSettings;
  #keys = new Map<string, KeyState>();
  #lastThrottledEvent = new Map<string, number>();

  constructor(settings: ThrottleSettings) {
    this.settings = settings;
  }

  /** Throws 429 when the name or the IP is locked. Returns the two keys for later bookkeeping. */
  check(
    methodId: string,
    loginName: string,
    ip: string,
    now = Date.now(),
  ): { nameKey: string; ipKey: string } {
    const nameKey = `n\u0000${methodId}\u0000${loginName}`;
    const ipKey = `i\u0000${ip}`;
    const until = Math.max(this.#lockedUntil(nameKey, now), this.#lockedUntil(ipKey, now));
    if (until > now) {
      const seconds = Math.max(1, Math.ceil((until - now) / 1000));
      throw new ApiError(429, `Too many failed authentication attempts; try again in ${seconds} seconds.`, {
        headers: { "Retry-After": String(seconds) },
      });
    }
    return { nameKey, ipKey };
  }

  /** Records a failure against both keys; locks a key that reaches its threshold inside the window. */
  fail(keys: { nameKey: string; ipKey: string }, now = Date.now()): void {
    this.#count(keys.nameKey, this.settings.nameThreshold, now);
    this.#count(keys.ipKey, this.settings.ipThreshold, now);
    this.#sweep(now);
  }

  /** A good login clears the name key (the IP keeps its history). */
  succeed(keys: { nameKey: string }): void {
    this.#keys.delete(keys.nameKey);
  }

  /** At most one `throttled` event per key per minute. */
  shouldReportThrottled(key: string, now = Date.now()): boolean {
    const last = this.#lastThrottledEvent.get(key) ?? 0;
    if (now - last < 60_000) return false;
    if (this.#lastThrottledEvent.size >= maxTrackedKeys) {
      // Entries older than a minute no longer suppress anything: drop them so a spray stays bounded.
      for (const [k, t] of this.#lastThrottledEvent) {
        if (now - t >= 60_000) this.#lastThrottledEvent.delete(k);
      }
    }
    this.#lastThrottledEvent.set(key, now);
    return true;
  }

  /** How many keys the throttle remembers (failure windows and throttled-event times). */
  get trackedKeys(): number {
    return this.#keys.size + this.#lastThrottledEvent.size;
  }

  #lockedUntil(key: string, now: number): number {
    const s = this.#keys.get(key);
    return s && s.lockedUntil > now ? s.lockedUntil : 0;
  }

  #count(key: string, threshold: number, now: number): void {
    let s = this.#keys.get(key);
    if (!s) this.#keys.set(key, s = { failures: [], lockedUntil: 0 });
    s.failures = s.failures.filter((t) => now - t < this.settings.windowMs);
    s.failures.push(now);
    if (s.failures.length >= threshold) {
      s.lockedUntil = now + this.settings.lockMs;
      s.failures = [];
    }
  }

  /** Keeps memory bounded under a spray of distinct names. */
  #sweep(now: number): void {
    if (this.#keys.size < maxTrackedKeys) return;
    for (const [k, s] of this.#keys) {
      if (s.lockedUntil <= now && s.failures.every((t) => now - t >= this.settings.windowMs)) {
        this.#keys.delete(k);
      }
    }
  }
}
