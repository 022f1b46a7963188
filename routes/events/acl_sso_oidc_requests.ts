// Pending OIDC logins between `auth-url` and `complete-auth`, by client nonce: in memory, at most
// maxOidcRequests, each expiring after oidcRequestTtlMs, as Nomad's request cache (docs/events.md#sso-login).

import { ApiError } from "../../lib/errors.ts";

export const maxOidcRequests = 1000;
export const oidcRequestTtlMs = 6 * 60_000;

export interface OidcRequest {
  authMethod: string;
  /** The method's Hash when the request was made: a changed method invalidates pending logins. */
  methodHash: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  expiresAt: number;
}

export class OidcRequests {
  readonly #byNonce = new Map<string, OidcRequest>();

  #sweep(now: number): void {
    for (const [nonce, r] of this.#byNonce) if (r.expiresAt <= now) this.#byNonce.delete(nonce);
  }

  get size(): number {
    return this.#byNonce.size;
  }

  /** The pending request of `nonce`, or a new one from `create`; 503 when maxOidcRequests are pending. */
  loadOrAdd(nonce: string, create: () => Omit<OidcRequest, "expiresAt">): OidcRequest {
    const now = Date.now();
    const found = this.#byNonce.get(nonce);
    if (found && found.expiresAt > now) return found;
    this.#byNonce.delete(nonce);
    if (this.#byNonce.size >= maxOidcRequests) this.#sweep(now);
    if (this.#byNonce.size >= maxOidcRequests) {
      throw new ApiError(503, "error storing OIDC request: too many requests");
    }
    const request = { ...create(), expiresAt: now + oidcRequestTtlMs };
    this.#byNonce.set(nonce, request);
    return request;
  }

  /** Removes and returns the pending request of `nonce` (single use), undefined when none or expired. */
  take(nonce: string): OidcRequest | undefined {
    const r = this.#byNonce.get(nonce);
    this.#byNonce.delete(nonce);
    return r && r.expiresAt > Date.now() ? r : undefined;
  }
}
