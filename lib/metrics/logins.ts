// Login metrics shared by the families that sign people in: attempts by auth method type and result, where a
// result is read from the answer's status (a login's cost is a password hash: a Map lookup here is nothing).

import { asApiError } from "../store_http.ts";
import type { MetricsRegistry, ValueFamily } from "./registry.ts";

/** The auth method types a login is counted under (registry: the registry's own passwords). */
export type LoginMethod = "password" | "ldap" | "oidc" | "registry";

/** What a login attempt came to: a token, refused credentials, the throttle's 429, a malformed request, a 5xx. */
export type LoginResult = "success" | "failure" | "throttled" | "invalid" | "error";

/** The node's login counter, one per node: the composition root makes it and hands it to every family. */
export class LoginMetrics {
  readonly #logins: ValueFamily;

  constructor(registry: MetricsRegistry) {
    this.#logins = registry.counter(
      "wharf_auth_logins_total",
      "Login attempts by auth method type (registry = the registry's own passwords) and result; \"throttled\" are the login throttle's refusals.",
      ["method", "result"],
    );
  }

  /** Counts one login attempt whose outcome the caller knows (an OIDC callback: its answer is a redirect either way). */
  record(method: LoginMethod, result: LoginResult): void {
    this.#logins.labels(method, result).inc();
  }

  /** Runs a login and counts it under `method` (a fixed type name: password, ldap, oidc, registry). */
  async count(method: LoginMethod, login: () => Promise<Response>): Promise<Response> {
    let result: LoginResult = "error";
    try {
      const response = await login();
      result = response.status < 400 ? "success" : resultOf(response.status);
      return response;
    } catch (err) {
      const status = asApiError(err)?.status ?? 500;
      result = resultOf(status);
      throw err;
    } finally {
      this.record(method, result);
    }
  }
}

function resultOf(status: number): LoginResult {
  if (status === 429) return "throttled";
  if (status >= 500) return "error";
  return status === 400 || status === 413 || status === 422 ? "invalid" : "failure";
}
