// Where an auth method's signing keys and OIDC endpoints come from: its PEM keys, a JWKS URL or the OIDC
// discovery document, fetched through lib/oidc (bounded, no redirects, a timeout, one fetch at a time shared by
// every concurrent login) and cached per method until it changes or is deleted (docs/events.md#sso-login,
// docs/security.md#sso-login).

import { createPublicKey } from "node:crypto";
import { compactVerify, type JWK } from "jose";
import { type DiscoveredConfig, fetchDiscovery } from "../../lib/oidc/discovery.ts";
import { remoteJwks } from "../../lib/oidc/jwks.ts";
import { createProviderHttp, type ProviderHttp } from "../../lib/oidc/provider_http.ts";
import { SharedFetch } from "../../lib/oidc/shared_fetch.ts";
import { ApiError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/log.ts";
import type { StoredAuthMethod } from "./acl_sso_model.ts";
import type { SsoState } from "./acl_sso_state.ts";

/** How long a provider may take to answer one request, its body included. */
const providerTimeoutMs = 10_000;
/** A discovery document is used this long before it is fetched again. */
const discoveryMaxAgeMs = 10 * 60_000;
/** After a failed discovery or JWKS fetch, the failure is answered this long before the provider is asked again. */
const providerRetryMs = 5_000;

export type Discovery = DiscoveredConfig;

export class SignatureError extends Error {}

/** A verified JWS: its payload and the algorithm it was signed with. */
type Verified = { payload: Uint8Array; alg: string };
type Verify = (token: string) => Promise<Verified>;

interface MethodEntry {
  hash: string;
  /** The method's CreateIndex: a method deleted and created again by its name is another method. */
  createIndex: number;
  http: ProviderHttp;
  /** One fetch in flight for every concurrent login, its failure answered again for providerRetryMs. */
  discovery: SharedFetch<Discovery>;
  verify?: Verify;
  /** The provider's keys from discovery (OIDC ID tokens), for the jwks_uri they were made for. */
  discoveryVerify?: { jwksUri: string; verify: Verify };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Per-method fetchers and key sets, one entry per existing method: rebuilt when the method's Hash changes or it
 * was created again, dropped when it is deleted (forget).
 */
export class ProviderCache {
  readonly #entries = new Map<string, MethodEntry>();
  readonly #logger: Logger | undefined;
  readonly #sso: Pick<SsoState, "authMethod"> | undefined;

  /**
   * `logger` hears why a discovery failed (auth-url answers that 502 without its reason); a method `sso` says
   * was deleted (on any node) loses its entry, its provider answers and TLS client, and only the method `sso`
   * holds now gets one.
   */
  constructor(logger?: Logger, sso?: Pick<SsoState, "onAuthMethodDeleted" | "authMethod">) {
    this.#logger = logger;
    this.#sso = sso;
    sso?.onAuthMethodDeleted((name) => this.forget(name));
  }

  close(): void {
    for (const e of this.#entries.values()) e.http.close();
    this.#entries.clear();
  }

  /** Drops what was cached for method `name`: its provider answers and its TLS client. */
  forget(name: string): void {
    this.#entries.get(name)?.http.close();
    this.#entries.delete(name);
  }

  /** How many methods have an entry (a test checks that deleted ones have none). */
  get size(): number {
    return this.#entries.size;
  }

  #entry(method: StoredAuthMethod): MethodEntry {
    let e = this.#entries.get(method.Name);
    if (e && e.hash === method.Hash && e.createIndex === method.CreateIndex) return e;
    // A login that read the method before it was deleted or changed (it waited for its provider meanwhile) makes
    // no entry: it would outlive the deleted method, or close the client of the current one's logins.
    const current = this.#sso?.authMethod(method.Name);
    if (this.#sso && (current?.CreateIndex !== method.CreateIndex || current.Hash !== method.Hash)) {
      throw new ApiError(
        400,
        `auth-method ${JSON.stringify(method.Name)} changed or was deleted during the login`,
      );
    }
    e?.http.close();
    const c = method.Config;
    const caCerts = [...(c.DiscoveryCaPem ?? []), ...(c.JWKSCACert ? [c.JWKSCACert] : [])];
    const http = createProviderHttp({ caCerts, timeoutMs: providerTimeoutMs });
    const discovery = new SharedFetch(() => this.#fetchDiscovery(method, http), {
      maxAgeMs: discoveryMaxAgeMs,
      retryMs: providerRetryMs,
      // Once per failed fetch, however many logins shared it: once per failure window.
      onFailure: (err) =>
        this.#logger?.warn("OIDC discovery failed", { auth_method: method.Name, error: describe(err) }),
    });
    e = { hash: method.Hash, createIndex: method.CreateIndex, http, discovery };
    this.#entries.set(method.Name, e);
    return e;
  }

  /** The method's provider HTTP: its CA certificates, the provider timeout, bounded answers, no redirects. */
  http(method: StoredAuthMethod): ProviderHttp {
    return this.#entry(method).http;
  }

  /** The OIDC discovery document of OIDCDiscoveryURL, its issuer checked against that URL. */
  discovery(method: StoredAuthMethod): Promise<Discovery> {
    return this.#entry(method).discovery.get();
  }

  async #fetchDiscovery(method: StoredAuthMethod, http: ProviderHttp): Promise<Discovery> {
    const issuer = method.Config.OIDCDiscoveryURL;
    const doc = await fetchDiscovery(http, issuer, ["jwks_uri"]);
    if (doc.issuer !== issuer) {
      throw new Error(
        `oidc: issuer did not match the issuer returned by provider, expected "${issuer}" got "${doc.issuer}"`,
      );
    }
    return doc;
  }

  /** A remote JWKS verifier (cached keys, refetched on an unknown kid after a cooldown). */
  remoteKeys(method: StoredAuthMethod, url: string): Verify {
    const jwks = remoteJwks(this.http(method), url, providerRetryMs);
    return async (token) => {
      const r = await compactVerify(token, jwks);
      return { payload: r.payload, alg: r.protectedHeader.alg };
    };
  }

  /** Verifies an ID token's signature with the keys of the provider's discovery document. */
  async verifyWithDiscovery(method: StoredAuthMethod, token: string): Promise<Verified> {
    const jwksUri = (await this.discovery(method)).jwks_uri;
    // Read after the await: every login that waited for discovery shares one key set (one JWKS fetch).
    const e = this.#entry(method);
    if (e.discoveryVerify?.jwksUri !== jwksUri) {
      e.discoveryVerify = { jwksUri, verify: this.remoteKeys(method, jwksUri) };
    }
    return await e.discoveryVerify.verify(token);
  }

  /** Verifies a JWT's signature with the method's keys: static PEM keys, else its JWKS URL, else discovery. */
  async verifySignature(method: StoredAuthMethod, token: string): Promise<Verified> {
    const e = this.#entry(method);
    if (!e.verify) {
      const c = method.Config;
      if (c.JWTValidationPubKeys?.length) e.verify = staticKeys(c.JWTValidationPubKeys);
      else if (c.JWKSURL) e.verify = this.remoteKeys(method, c.JWKSURL);
      else if (c.OIDCDiscoveryURL) {
        e.verify = async (t) => {
          try {
            await this.discovery(method);
          } catch (err) {
            throw new SignatureError(`unable to get validation keys from OIDC provider: ${describe(err)}`);
          }
          return await this.verifyWithDiscovery(method, t);
        };
      } else throw new SignatureError("the auth method has no key source");
    }
    try {
      return await e.verify(token);
    } catch (err) {
      if (err instanceof SignatureError) throw err;
      throw new SignatureError(`error verifying token signature: ${describe(err)}`);
    }
  }
}

/** The PEM keys as JWKs (parsed once); a token verifies when any of them verifies it. */
function staticKeys(pems: readonly string[]): Verify {
  let keys: JWK[] | undefined;
  return async (token) => {
    if (!keys) {
      try {
        keys = pems.map((pem) => createPublicKey(pem).export({ format: "jwk" }) as JWK);
      } catch (err) {
        throw new SignatureError(`unable to parse public key for JWT auth: ${describe(err)}`);
      }
    }
    let last: unknown = new Error("no keys");
    for (const key of keys) {
      try {
        const r = await compactVerify(token, key);
        return { payload: r.payload, alg: r.protectedHeader.alg };
      } catch (err) {
        last = err;
      }
    }
    throw last;
  };
}
