// The OpenID provider's discovery document: fetched from <issuer>/.well-known/openid-configuration (bounded,
// no redirects) and read into the fields wharf uses. Each family compares the issuer in its own words.

import { OidcProviderError, type ProviderHttp } from "./provider_http.ts";
import { readProviderJson } from "./provider_json.ts";

/** The discovery document fields wharf relies on (the ones a caller lists as required are present). */
export interface DiscoveredConfig {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  id_token_signing_alg_values_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
}

type EndpointField =
  | "issuer"
  | "authorization_endpoint"
  | "token_endpoint"
  | "jwks_uri"
  | "userinfo_endpoint";

function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

function stringList(doc: Record<string, unknown>, name: string): string[] | undefined {
  const v = doc[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
}

/**
 * GETs and reads the issuer's discovery document; OidcProviderError when it cannot be had or lacks one of
 * `required`. An absent field that is not required reads as "" (userinfo_endpoint: absent). Does not compare
 * the issuer.
 */
export async function fetchDiscovery(
  http: ProviderHttp,
  issuer: string,
  required: readonly EndpointField[],
): Promise<DiscoveredConfig> {
  const url = discoveryUrl(issuer);
  const doc = await readProviderJson(
    await http.fetch(url, { headers: { accept: "application/json" } }),
    url,
    http.timeoutMs,
  );
  const field = (name: EndpointField): string => {
    const v = doc[name];
    if (typeof v === "string" && v !== "") return v;
    if (required.includes(name)) throw new OidcProviderError(`discovery document has no ${name}`);
    return "";
  };
  const config: DiscoveredConfig = {
    issuer: field("issuer"),
    authorization_endpoint: field("authorization_endpoint"),
    token_endpoint: field("token_endpoint"),
    jwks_uri: field("jwks_uri"),
  };
  const userinfo = field("userinfo_endpoint");
  if (userinfo) config.userinfo_endpoint = userinfo;
  const algs = stringList(doc, "id_token_signing_alg_values_supported");
  if (algs) config.id_token_signing_alg_values_supported = algs;
  const auth = stringList(doc, "token_endpoint_auth_methods_supported");
  if (auth) config.token_endpoint_auth_methods_supported = auth;
  if (doc.authorization_response_iss_parameter_supported === true) {
    config.authorization_response_iss_parameter_supported = true;
  }
  return config;
}
