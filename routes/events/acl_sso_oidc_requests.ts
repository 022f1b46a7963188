// Pending OIDC logins between `auth-url` and `complete-auth`, by client nonce, as documents in the store so any
// node can complete a login another node started and a restart loses none: at most maxOidcRequests in the
// cluster (maxOidcRequestsPerAddress per client address), each expiring after oidcRequestTtlMs, used once; each
// is a commit, so a client address starts at most WHARF_OIDC_STARTS_PER_MINUTE a minute on a node, admitted
// before the provider is asked anything, and completes at most as many (docs/events.md#sso-login,
// docs/security.md#sso-login).

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import { RateLimiter } from "../../lib/rate_limiter.ts";
import type { StoredDoc } from "../../lib/store/mod.ts";
import { SealedDocs } from "../../lib/store/sealed_docs.ts";

export const oidcRequestsCollection = "cluster/acl_oidc_requests";
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
}

/**
 * One pending login. The id is HMAC(nonce) and `address` HMAC(client address); state, nonce and PKCE verifier
 * are one sealed value (AAD: the id). The commits carry no events.
 */
interface StoredOidcRequest {
  [k: string]: unknown;
  auth_method: string;
  method_hash: string;
  redirect_uri: string;
  address: string;
  expires_at: number;
  secrets: string;
}

interface RequestSecrets {
  state: string;
  nonce: string;
  code_verifier: string;
}

/** 429 when the address has its share pending, 503 when the cluster is full. */
const tooMany = (full: "address" | "cluster", retryAfterSeconds = 60) =>
  new ApiError(
    full === "address" ? 429 : 503,
    `error storing OIDC request: too many requests${full === "address" ? " from this address" : ""}`,
    { headers: { "Retry-After": String(retryAfterSeconds) } },
  );

/** 429 when the address completed its minute's share. */
const tooManyCompletions = (retryAfterSeconds: number) =>
  new ApiError(429, "error completing OIDC login: too many requests from this address", {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });

export class OidcRequests {
  readonly #app: AppContext;
  readonly #docs: SealedDocs<StoredOidcRequest>;
  /** New pending logins per client address on this node (each one is a durable commit). */
  readonly #starts: RateLimiter;
  /** complete-auth calls per client address on this node: the same budget as starts, counted apart. */
  readonly #completions: RateLimiter;
  /** HMAC(address) → pending requests (any node's), kept current by a watch. */
  readonly #perAddress = new Map<string, number>();
  /** Creates under way on this node (counted against both caps). */
  readonly #creating = new Map<string, number>();
  readonly #unwatch: () => void;

  constructor(app: AppContext, startsPerMinute: number) {
    this.#app = app;
    this.#starts = new RateLimiter(startsPerMinute / 60, startsPerMinute);
    this.#completions = new RateLimiter(startsPerMinute / 60, startsPerMinute);
    this.#docs = new SealedDocs(app.data, {
      collection: oidcRequestsCollection,
      hmacPurpose: "events.acl-oidc-request",
      sealPurpose: "events.acl-oidc-request-secrets",
      expiresAt: (doc) => doc.expires_at,
      sweepEveryMs: 30_000,
    });
    const { store } = app.data;
    for (const r of store.list<StoredOidcRequest>(oidcRequestsCollection)) this.#bump(r.doc.address, 1);
    this.#unwatch = store.watch(oidcRequestsCollection, (c) => {
      const prev = c.previous?.doc as StoredOidcRequest | undefined;
      const cur = c.current?.doc as StoredOidcRequest | undefined;
      if (prev) this.#bump(prev.address, -1);
      if (cur) this.#bump(cur.address, 1);
    });
  }

  close(): void {
    this.#unwatch();
    this.#docs.close();
  }

  #bump(address: string, by: number, counts = this.#perAddress): void {
    const n = (counts.get(address) ?? 0) + by;
    if (n > 0) counts.set(address, n);
    else counts.delete(address);
  }

  /** Pending requests the cluster holds (as this node has seen them), expired ones not yet swept included. */
  get size(): number {
    return this.#app.data.store.count(oidcRequestsCollection);
  }

  #pendingFrom(address: string): number {
    return (this.#perAddress.get(address) ?? 0) + (this.#creating.get(address) ?? 0);
  }

  #full(address: string): "address" | "cluster" | undefined {
    if (this.#pendingFrom(address) >= maxOidcRequestsPerAddress) return "address";
    let creating = 0;
    for (const n of this.#creating.values()) creating += n;
    return this.size + creating >= maxOidcRequests ? "cluster" : undefined;
  }

  #opened(id: string, doc: StoredOidcRequest): OidcRequest | undefined {
    const opened = this.#docs.open(doc.secrets, id);
    if (opened === undefined) return undefined;
    const secrets = JSON.parse(opened) as RequestSecrets;
    return {
      authMethod: doc.auth_method,
      methodHash: doc.method_hash,
      redirectUri: doc.redirect_uri,
      state: secrets.state,
      nonce: secrets.nonce,
      codeVerifier: secrets.code_verifier,
    };
  }

  /**
   * The pending request of `nonce`, or a new one from `create`, durable before it resolves: 429 when its address
   * has maxOidcRequestsPerAddress pending or started its minute's share, 503 when maxOidcRequests are pending.
   * `prepare` (the provider's discovery) runs once the request is admitted — a new one holds its place in the
   * caps and has taken its address's start meanwhile — so a refused start never reaches the provider.
   */
  async loadOrAdd<T>(
    nonce: string,
    address: string,
    prepare: () => Promise<T>,
    create: () => OidcRequest,
  ): Promise<{ request: OidcRequest; prepared: T }> {
    const id = this.#docs.hmacOf(`nonce:${nonce}`);
    const live = (s: StoredDoc<StoredOidcRequest> | undefined) => s && s.doc.expires_at > Date.now();
    const seen = this.#app.data.store.get<StoredOidcRequest>(oidcRequestsCollection, id);
    const found = live(seen) ? this.#opened(id, seen!.doc) : undefined;
    if (found) return { request: found, prepared: await prepare() };
    const addressHash = this.#docs.hmacOf(`address:${address}`);
    if (this.#full(addressHash)) await this.#docs.sweep();
    const full = this.#full(addressHash);
    if (full) throw tooMany(full);
    const wait = this.#starts.take(address);
    if (wait > 0) throw tooMany("address", wait);
    this.#bump(addressHash, 1, this.#creating);
    try {
      const prepared = await prepare();
      const { result } = await this.#docs.transact(id, (cur) => {
        const again = live(cur) ? this.#opened(id, cur!.doc) : undefined;
        if (again) return { result: again };
        const request = create();
        const secrets: RequestSecrets = {
          state: request.state,
          nonce: request.nonce,
          code_verifier: request.codeVerifier,
        };
        const doc: StoredOidcRequest = {
          auth_method: request.authMethod,
          method_hash: request.methodHash,
          redirect_uri: request.redirectUri,
          address: addressHash,
          expires_at: Date.now() + oidcRequestTtlMs,
          secrets: this.#docs.seal(JSON.stringify(secrets), id),
        };
        return { doc, result: request };
      });
      return { request: result, prepared };
    } finally {
      this.#bump(addressHash, -1, this.#creating);
    }
  }

  /** Takes one of the address's completions of this minute: 429 with Retry-After when it has none left. */
  admitCompletion(address: string): void {
    const wait = this.#completions.take(address);
    if (wait > 0) throw tooManyCompletions(wait);
  }

  /**
   * Deletes the pending request of `nonce` durably (single use, whichever node holds the other callback) and
   * returns it; undefined when none, expired, or already taken.
   */
  async take(nonce: string): Promise<OidcRequest | undefined> {
    const id = this.#docs.hmacOf(`nonce:${nonce}`);
    const { result } = await this.#docs.transact(id, (cur) => {
      if (!cur) return { result: undefined };
      const request = cur.doc.expires_at > Date.now() ? this.#opened(id, cur.doc) : undefined;
      return { doc: null, result: request };
    });
    return result;
  }
}
