// Pending OIDC logins between `auth-url` and `complete-auth`, by client nonce: in memory, at most
// maxOidcRequests (maxOidcRequestsPerAddress per client address, so one client cannot take them all), each
// expiring after oidcRequestTtlMs, as Nomad's request cache (docs/events.md#sso-login, docs/security.md).

import { ApiError } from "../../lib/errors.ts";

export const maxOidcRequests = 1000;
export const maxOidcRequestsPerAddress = 20;
export const oidcRequestTtlMs = 6 * 60_000;

export interface OidcRequest {
  authMethod: string;
  /** The method's Hash when the request was made: a changed method invalidates pending logins. */
  methodHash: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The client address that asked for the auth URL. */
  address: string;
  expiresAt: number;
}

export class OidcRequests {
  readonly #byNonce = new Map<string, OidcRequest>();
  readonly #perAddress = new Map<string, number>();

  #delete(nonce: string): void {
    const r = this.#byNonce.get(nonce);
    if (!r) return;
    this.#byNonce.delete(nonce);
    const n = (this.#perAddress.get(r.address) ?? 1) - 1;
    if (n > 0) this.#perAddress.set(r.address, n);
    else this.#perAddress.delete(r.address);
  }

  #sweep(now: number): void {
    for (const [nonce, r] of this.#byNonce) if (r.expiresAt <= now) this.#delete(nonce);
  }

  get size(): number {
    return this.#byNonce.size;
  }

  /**
   * The pending request of `nonce`, or a new one from `create`: 429 when its address has
   * maxOidcRequestsPerAddress pending, 503 when maxOidcRequests are pending.
   */
  loadOrAdd(nonce: string, create: () => Omit<OidcRequest, "expiresAt">): OidcRequest {
    const now = Date.now();
    const found = this.#byNonce.get(nonce);
    if (found && found.expiresAt > now) return found;
    this.#delete(nonce);
    const request = { ...create(), expiresAt: now + oidcRequestTtlMs };
    const full = () =>
      this.#byNonce.size >= maxOidcRequests ||
      (this.#perAddress.get(request.address) ?? 0) >= maxOidcRequestsPerAddress;
    if (full()) this.#sweep(now);
    if ((this.#perAddress.get(request.address) ?? 0) >= maxOidcRequestsPerAddress) {
      throw new ApiError(429, "error storing OIDC request: too many requests from this address", {
        headers: { "Retry-After": "60" },
      });
    }
    if (this.#byNonce.size >= maxOidcRequests) {
      throw new ApiError(503, "error storing OIDC request: too many requests", {
        headers: { "Retry-After": "60" },
      });
    }
    this.#byNonce.set(nonce, request);
    this.#perAddress.set(request.address, (this.#perAddress.get(request.address) ?? 0) + 1);
    return request;
  }

  /** Removes and returns the pending request of `nonce` (single use), undefined when none or expired. */
  take(nonce: string): OidcRequest | undefined {
    const r = this.#byNonce.get(nonce);
    this.#delete(nonce);
    return r && r.expiresAt > Date.now() ? r : undefined;
  }
}
