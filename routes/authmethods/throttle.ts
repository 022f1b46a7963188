// Login throttling in memory (docs/security.md#throttles): failures per (method, login name) and per client
// IP inside a window lock the key for a while; locked keys get 429 with Retry-After, even with the right
// password. An attempt counts from before its check, so concurrent guesses get no more answers than the
// threshold.

import { ApiError } from "../../lib/errors.ts";
import { FailureLimitReached, FailureThrottle, type ThrottleOptions } from "../../lib/failure_throttle.ts";

export interface ThrottleSettings {
  nameThreshold: number;
  ipThreshold: number;
  windowMs: number;
  lockMs: number;
}

/** One login's slots on its name and IP keys; `check` settles it. */
export interface LoginAttempt {
  /**
   * Runs the credential check: a failure on both keys unless `succeeded(result)` (default: the result is
   * `true`), and a success clears the name key; a check that throws counts nothing.
   */
  check<T>(run: () => Promise<T>, succeeded?: (result: T) => boolean): Promise<T>;
}

const maxTrackedKeys = 100_000;

export class LoginThrottle {
  readonly settings: ThrottleSettings;
  readonly #failures: FailureThrottle<"name" | "ip">;

  constructor(settings: ThrottleSettings, options: ThrottleOptions = {}) {
    this.settings = settings;
    this.#failures = new FailureThrottle({
      name: { limit: settings.nameThreshold, windowMs: settings.windowMs, lockMs: settings.lockMs },
      ip: { limit: settings.ipThreshold, windowMs: settings.windowMs, lockMs: settings.lockMs },
    }, { maxKeys: maxTrackedKeys, ...options });
  }

  /**
   * Takes the login's slots (waiting while attempts in flight could still lock a key): 429 when the name or
   * the IP is locked. `loginName` is the key as the method matches names (see ldapLoginKey).
   */
  async begin(methodId: string, loginName: string, ip: string): Promise<LoginAttempt> {
    try {
      const attempt = await this.#failures.begin({ name: `${methodId}\u0000${loginName}`, ip });
      return {
        check: (run, succeeded = (result) => result === true) => attempt.run(run, succeeded, ["name"]),
      };
    } catch (err) {
      if (!(err instanceof FailureLimitReached)) throw err;
      const seconds = err.retryAfter;
      throw new ApiError(429, `Too many failed authentication attempts; try again in ${seconds} seconds.`, {
        headers: { "Retry-After": String(seconds) },
      });
    }
  }

  /** How many keys the throttle remembers. */
  get trackedKeys(): number {
    return this.#failures.size;
  }
}
