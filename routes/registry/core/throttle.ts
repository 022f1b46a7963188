// The registry's login throttle (docs/security.md#throttles): failed credential checks per login and per
// client IP in a sliding 15-minute window, counted while the check runs so concurrent guesses cannot overtake
// it. Memory only.

import { ApiError } from "../../../lib/errors.ts";
import { type Attempt, FailureLimitReached, FailureThrottle } from "../../../lib/failure_throttle.ts";

const MINUTE = 60_000;
export const IP_FAILURE_LIMIT = 50;

/** The registry's 429 (rate limit and throttles alike). */
export function rateLimited(seconds: number): ApiError {
  return new ApiError(429, `Rate limit exceeded; retry in ${seconds} s`, {
    headers: { "Retry-After": String(seconds) },
  });
}

export class LoginThrottle {
  readonly #failures: FailureThrottle<"login" | "ip">;

  constructor(loginLimit: number, ipLimit = IP_FAILURE_LIMIT, windowMs = 15 * MINUTE) {
    this.#failures = new FailureThrottle({
      login: { limit: loginLimit, windowMs },
      ip: { limit: ipLimit, windowMs },
    });
  }

  /**
   * Checks a password with `verify` as one attempt on the login's key and the IP: 429 while
   * either is over its limit, counting the attempt from before the check; returns whether it passed.
   */
  async check(login: string, ip: string, verify: () => Promise<boolean>): Promise<boolean> {
    let attempt: Attempt<"login" | "ip">;
    try {
      attempt = await this.#failures.begin({ login, ip });
    } catch (err) {
      if (err instanceof FailureLimitReached) throw rateLimited(err.retryAfter);
      throw err;
    }
    return await attempt.run(verify, (ok) => ok);
  }
}
