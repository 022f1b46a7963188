// HTTP to an OpenID provider for one OIDC auth method: its idp_ca_certs as trust anchors, a per-request
// timeout, no redirects followed, and the discovery document fetch.

import { oidcListFields } from "../methods/attrs_oidc.ts";

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

/** The discovery document fields wharf relies on. */
export interface DiscoveredConfig {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  id_token_signing_alg_values_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
}

export class OidcHttpError extends Error {}

/** A fetch bound to one method's trust settings; close() releases its TLS client. */
export interface ProviderHttp {
  fetch(url: string, init?: RequestInit): Promise<Response>;
  close(): void;
}

export function providerHttp(attrs: OidcMethodAttributes, timeoutMs: number): ProviderHttp {
  // Deno adds caCerts to its root store; with no CA configured the system/Mozilla roots apply.
  const client = attrs.idp_ca_certs?.length
    ? Deno.createHttpClient({ caCerts: attrs.idp_ca_certs })
    : undefined;
  return {
    async fetch(url, init = {}) {
      const parsed = new URL(url);
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
        throw new OidcHttpError(`unsupported URL scheme in ${url}`);
      }
      try {
        return await fetch(url, {
          ...init,
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
          ...(client ? { client } : {}),
        });
      } catch (err) {
        const why = err instanceof DOMException && err.name === "TimeoutError"
          ? `timed out after ${timeoutMs} ms`
          : err instanceof Error
          ? err.message
          : String(err);
        throw new OidcHttpError(`${init.method ?? "GET"} ${url} failed: ${why}`);
      }
    },
    close() {
      client?.close();
    },
  };
}

/** Reads a JSON object body, or throws OidcHttpError naming what was expected. */
export async function readJsonObject(res: Response, what: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  if (res.status !== 200) throw new OidcHttpError(`${what} returned HTTP ${res.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new OidcHttpError(`${what} is not JSON`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OidcHttpError(`${what} is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

function stringField(doc: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const v = doc[name];
  if (typeof v === "string" && v !== "") return v;
  if (required) throw new OidcHttpError(`discovery document has no ${name}`);
  return undefined;
}

function stringList(doc: Record<string, unknown>, name: string): string[] | undefined {
  const v = doc[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
}

/** GETs and parses the issuer's discovery document (no redirects). Does not compare the issuer. */
export async function fetchDiscovery(http: ProviderHttp, issuer: string): Promise<DiscoveredConfig> {
  const url = discoveryUrl(issuer);
  const doc = await readJsonObject(await http.fetch(url, { headers: { accept: "application/json" } }), url);
  const config: DiscoveredConfig = {
    issuer: stringField(doc, "issuer", true)!,
    authorization_endpoint: stringField(doc, "authorization_endpoint", true)!,
    token_endpoint: stringField(doc, "token_endpoint", true)!,
    jwks_uri: stringField(doc, "jwks_uri", true)!,
  };
  const userinfo = stringField(doc, "userinfo_endpoint", false);
  if (userinfo) config.userinfo_endpoint = userinfo;
  const algs = stringList(doc, "id_token_signing_alg_values_supported");
  if (algs) config.id_token_signing_alg_values_supported = algs;
  const auth = stringList(doc, "token_endpoint_auth_methods_supported");
  if (auth) config.token_endpoint_auth_methods_supported = auth;
  return config;
}

/** Discovery plus the check every login needs: the document's issuer must be ours, exactly. */
export async function discoverVerified(
  http: ProviderHttp,
  attrs: OidcMethodAttributes,
): Promise<DiscoveredConfig> {
  if (!attrs.issuer) throw new OidcHttpError("the auth method has no issuer");
  const config = await fetchDiscovery(http, attrs.issuer);
  if (config.issuer !== attrs.issuer) {
    throw new OidcHttpError(
      `discovered issuer ${JSON.stringify(config.issuer)} does not match the configured issuer ${
        JSON.stringify(attrs.issuer)
      }`,
    );
  }
  return config;
}
