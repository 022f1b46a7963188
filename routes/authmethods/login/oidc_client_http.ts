// An OIDC auth method's attributes as the provider client reads them, its HTTP client (the method's
// idp_ca_certs over lib/oidc's bounded provider HTTP) and the issuer-checked discovery of a login (one fetch
// shared by the logins that start at once).

import { type DiscoveredConfig, fetchDiscovery } from "../../../lib/oidc/discovery.ts";
import { createProviderHttp, OidcProviderError, type ProviderHttp } from "../../../lib/oidc/provider_http.ts";
import { SingleFlight } from "../../../lib/oidc/shared_fetch.ts";
import { oidcListFields } from "../methods/attrs_oidc.ts";

export type { DiscoveredConfig, ProviderHttp };

/** The OIDC attributes of a method (API names), client_secret decrypted. */
export interface OidcMethodAttributes {
  issuer?: string;
  client_id?: string;
  client_secret?: string;
  max_age?: number;
  signing_algorithms?: string[];
  api_url_prefix?: string;
  idp_ca_certs?: string[];
  allowed_audiences?: string[];
  claims_scopes?: string[];
  account_claim_maps?: string[];
  prompts?: string[];
}

/** What callers may pass: the typed attributes, or the stored attribute object as it is. */
export type OidcAttributesInput = OidcMethodAttributes | Readonly<Record<string, unknown>>;

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function strList(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
}

/** Picks the OIDC attributes by name and type; anything of the wrong type counts as absent. */
export function toOidcAttributes(raw: OidcAttributesInput): OidcMethodAttributes {
  const r = raw as Record<string, unknown>;
  const out: OidcMethodAttributes = {};
  for (const k of ["issuer", "client_id", "client_secret", "api_url_prefix"] as const) {
    const v = str(r[k]);
    if (v !== undefined) out[k] = v;
  }
  for (const k of oidcListFields) {
    const v = strList(r[k]);
    if (v !== undefined) out[k] = v;
  }
  if (typeof r.max_age === "number" && Number.isInteger(r.max_age) && r.max_age >= 0) out.max_age = r.max_age;
  return out;
}

/** An HTTP client to the method's provider: its idp_ca_certs as trust anchors (lib/oidc/provider_http.ts). */
export function providerHttp(attrs: OidcMethodAttributes, timeoutMs: number): ProviderHttp {
  return createProviderHttp({ caCerts: attrs.idp_ca_certs ?? [], timeoutMs });
}

/** Discovery plus the check every login needs: the document's issuer must be ours, exactly. */
export async function discoverVerified(
  http: ProviderHttp,
  attrs: OidcMethodAttributes,
): Promise<DiscoveredConfig> {
  if (!attrs.issuer) throw new OidcProviderError("the auth method has no issuer");
  const config = await fetchDiscovery(http, attrs.issuer, requiredDiscoveryFields);
  if (config.issuer !== attrs.issuer) {
    throw new OidcProviderError(
      `discovered issuer ${JSON.stringify(config.issuer)} does not match the configured issuer ${
        JSON.stringify(attrs.issuer)
      }`,
    );
  }
  return config;
}

/** Discoveries under way, by provider (issuer, trust anchors, timeout). */
const discoveries = new SingleFlight<DiscoveredConfig>();

/**
 * discoverVerified through a client of its own, one fetch shared by every caller asking the same provider
 * meanwhile: starts that come at once, from any number of addresses, ask the provider once
 * (docs/security.md#openid-providers).
 */
export function discoverShared(attrs: OidcMethodAttributes, timeoutMs: number): Promise<DiscoveredConfig> {
  const key = JSON.stringify([attrs.issuer ?? "", attrs.idp_ca_certs ?? [], timeoutMs]);
  return discoveries.run(key, async () => {
    const http = providerHttp(attrs, timeoutMs);
    try {
      return await discoverVerified(http, attrs);
    } finally {
      http.close();
    }
  });
}

/** What a Boundary OIDC login needs of the discovery document. */
export const requiredDiscoveryFields = [
  "issuer",
  "authorization_endpoint",
  "token_endpoint",
  "jwks_uri",
] as const;
