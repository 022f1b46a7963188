// Failure throttles that concurrency cannot beat (login names, client IPs, two-factor codes): an attempt
// holds a slot on each of its keys from before its asynchronous check until its outcome is recorded, so
// no more than a key's limit of failures is ever answered, however many attempts arrive at once.
// Memory only: per node, by design.

export interface FailureRule {
  /** Failures inside `windowMs` that block the key. */
  limit: number;
  windowMs: number;
  /**
   * Once `limit` failures are reached the key is blocked this long, and its count starts again after.
   * Without it the window slides: the key is blocked until enough of its failures leave the window.
   */
  lockMs?: number;
}

/** A key of the attempt is blocked: retry in `retryAfter` seconds. */
export class FailureLimitReached extends Error {
  constructor(readonly retryAfter: number) {
    super(`too many failures; retry in ${retryAfter} s`);
  }
}

interface KeyState {
  failures: number[];
  lockedUntil: number;
  /** Attempts begun and not yet settled: each may still become a failure. */
  inFlight: number;
  /** Attempts waiting for an in-flight one to settle (wake them all: each looks again). */
  waiters: (() => void)[];
}

export interface ThrottleOptions {
  /** Keys remembered before idle ones are swept and, past that, the oldest forgotten. */
  maxKeys?: number;
  /** Attempts that may wait on one key; beyond that an attempt is refused (retry in 1 s). */
  maxWaiters?: number;
  clock?: () => number;
}

/** An attempt's slots: settle it exactly once (later calls do nothing). */
export interface Attempt<K extends string> {
  /** The credential was wrong: counts a failure on every key. */
  fail(): void;
  /** The credential was right: the `reset` kinds forget their failures (the others keep theirs). */
  succeed(reset?: readonly K[]): void;
  /** Neither (the check could not run): frees the slots without counting. */
  release(): void;
  /**
   * Runs the credential check in this attempt: a failure unless `succeeded(result)` (then `reset` applies);
   * a check that throws frees the slots without counting.
   */
  run<T>(check: () => Promise<T>, succeeded: (result: T) => boolean, reset?: readonly K[]): Promise<T>;
}

/**
 * Failure counts under one rule per kind of key (say `name` and `ip`). `begin` waits while the attempts in
 * flight on a key could still reach its limit, so the outcome is that of the attempts taken one by one in
 * the order they got their slots: the attempt after the limit's failure is refused, never checked.
 */
export class FailureThrottle<K extends string> {
  readonly rules: Readonly<Record<K, FailureRule>>;
  readonly #maxKeys: number;
  readonly #maxWaiters: number;
  readonly #clock: () => number;
  readonly #keys = new Map<string, KeyState>();

  constructor(rules: Record<K, FailureRule>, options: ThrottleOptions = {}) {
    this.rules = rules;
    this.#maxKeys = options.maxKeys ?? 100_000;
    this.#maxWaiters = options.maxWaiters ?? 1_000;
    this.#clock = options.clock ?? Date.now;
  }

  /**
   * Takes a slot on each given key, waiting while a key's failures plus attempts in flight reach its limit;
   * throws FailureLimitReached as soon as one key is blocked (or too many attempts wait on one).
   */
  async begin(keys: Partial<Record<K, string>>): Promise<Attempt<K>> {
    const slots = this.#slots(keys);
    for (;;) {
      const now = this.#clock();
      this.#throwIfBlocked(slots, now);
      const full = slots.find(([rule, id]) => {
        const s = this.#keys.get(id);
        return s !== undefined && s.inFlight > 0 && s.failures.length + s.inFlight >= rule.limit;
      });
      if (!full) return this.#reserve(slots);
      const state = this.#keys.get(full[1])!;
      if (state.waiters.length >= this.#maxWaiters) throw new FailureLimitReached(1);
      await new Promise<void>((wake) => state.waiters.push(wake));
    }
  }

  /** Seconds until every given key takes attempts again; 0 when none is blocked. */
  blockedSeconds(keys: Partial<Record<K, string>>): number {
    try {
      this.#throwIfBlocked(this.#slots(keys), this.#clock());
      return 0;
    } catch (err) {
      if (err instanceof FailureLimitReached) return err.retryAfter;
      throw err;
    }
  }

  /**
   * Counts one failure (or one use, for a plain rate) on each key, for checks that never yield between
   * `blockedSeconds` and this call, so that no attempt of theirs is ever in flight.
   */
  record(keys: Partial<Record<K, string>>): void {
    const slots = this.#slots(keys);
    const now = this.#clock();
    for (const [rule, id] of slots) this.#fail(this.#state(id), rule, now);
  }

  /** Forgets a key's failures and lock (attempts in flight on it still count). */
  reset(kind: K, key: string): void {
    const id = `${kind}\u0000${key}`;
    const s = this.#keys.get(id);
    if (!s) return;
    s.failures = [];
    s.lockedUntil = 0;
    this.#wake(s);
    this.#dropIfIdle(id, s);
  }

  /** How many keys are remembered. */
  get size(): number {
    return this.#keys.size;
  }

  #slots(keys: Partial<Record<K, string>>): [FailureRule, string][] {
    const out: [FailureRule, string][] = [];
    for (const kind in keys) {
      const key = keys[kind];
      if (key !== undefined) out.push([this.rules[kind], `${kind}\u0000${key}`]);
    }
    return out;
  }

  #throwIfBlocked(slots: [FailureRule, string][], now: number): void {
    let blockedMs = 0;
    for (const [rule, id] of slots) {
      const s = this.#keys.get(id);
      if (s) blockedMs = Math.max(blockedMs, this.#blockedMs(s, rule, now));
    }
    if (blockedMs > 0) throw new FailureLimitReached(Math.max(1, Math.ceil(blockedMs / 1000)));
  }

  #blockedMs(s: KeyState, rule: FailureRule, now: number): number {
    if (s.lockedUntil > now) return s.lockedUntil - now;
    s.lockedUntil = 0;
    if (s.failures.length && now - s.failures[0]! >= rule.windowMs) {
      s.failures = s.failures.filter((t) => now - t < rule.windowMs);
    }
    if (rule.lockMs !== undefined || s.failures.length < rule.limit) return 0;
    return s.failures[s.failures.length - rule.limit]! + rule.windowMs - now;
  }

  #reserve(slots: [FailureRule, string][]): Attempt<K> {
    const held = slots.map(([rule, id]) => {
      const s = this.#state(id);
      s.inFlight++;
      return { rule, id, s };
    });
    let settled = false;
    const settle = (count: boolean, reset: readonly K[] = []) => {
      if (settled) return;
      settled = true;
      const now = this.#clock();
      for (const { rule, id, s } of held) {
        s.inFlight--;
        if (count) this.#fail(s, rule, now);
        else if (reset.some((kind) => id.startsWith(`${kind}\u0000`))) {
          s.failures = [];
          s.lockedUntil = 0;
        }
        this.#wake(s);
        this.#dropIfIdle(id, s);
      }
    };
    return {
      fail: () => settle(true),
      succeed: (reset) => settle(false, reset),
      release: () => settle(false),
      async run(check, succeeded, reset) {
        try {
          const result = await check();
          settle(!succeeded(result), reset);
          return result;
        } finally {
          settle(false);
        }
      },
    };
  }

  #fail(s: KeyState, rule: FailureRule, now: number): void {
    s.failures = s.failures.filter((t) => now - t < rule.windowMs);
    s.failures.push(now);
    if (rule.lockMs !== undefined && s.failures.length >= rule.limit) {
      s.lockedUntil = now + rule.lockMs;
      s.failures = [];
    }
  }

  #wake(s: KeyState): void {
    if (!s.waiters.length) return;
    const waiters = s.waiters;
    s.waiters = [];
    for (const wake of waiters) wake();
  }

  #dropIfIdle(id: string, s: KeyState): void {
    if (s.inFlight === 0 && !s.waiters.length && !s.failures.length && s.lockedUntil === 0) {
      if (this.#keys.get(id) === s) this.#keys.delete(id);
    }
  }

  #state(id: string): KeyState {
    let s = this.#keys.get(id);
    if (!s) {
      if (this.#keys.size >= this.#maxKeys) this.#makeRoom();
      s = { failures: [], lockedUntil: 0, inFlight: 0, waiters: [] };
      this.#keys.set(id, s);
    }
    return s;
  }

  /**
   * Keeps memory bounded under a spray of distinct keys: drops expired keys, then (still full) the oldest
   * keys with nothing in flight, down to nine tenths, so the next sweeps are far apart.
   */
  #makeRoom(): void {
    const now = this.#clock();
    const target = Math.floor(this.#maxKeys * 0.9);
    for (const [id, s] of this.#keys) {
      const rule = this.rules[id.slice(0, id.indexOf("\u0000")) as K];
      if (s.inFlight || s.waiters.length || s.lockedUntil > now) continue;
      if (s.failures.every((t) => now - t >= rule.windowMs)) this.#keys.delete(id);
    }
    for (const [id, s] of this.#keys) {
      if (this.#keys.size <= target) break;
      if (!s.inFlight && !s.waiters.length) this.#keys.delete(id);
    }
  }
}
