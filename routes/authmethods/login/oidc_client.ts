// The OIDC relying-party side of an auth method (docs/auth-methods.md#oidc): discovery validation for
// change-state/PATCH, the authorization URL for `start`, and the code exchange for the callback.

import { fetchDiscovery } from "../../../lib/oidc/discovery.ts";
import { fetchJwks } from "../../../lib/oidc/jwks.ts";
import {
  type DiscoveredConfig,
  discoverShared,
  type OidcAttributesInput,
  providerHttp,
  requiredDiscoveryFields,
  toOidcAttributes,
} from "./oidc_client_http.ts";

export type { DiscoveredConfig, OidcAttributesInput, OidcMethodAttributes } from "./oidc_client_http.ts";
export { exchangeCode, type ExchangeResult } from "./oidc_client_token.ts";
export { pkceChallenge } from "../../../lib/oidc/pkce.ts";

const defaultTimeoutMs = 10_000;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Discovery validation (docs/auth-methods.md#oidc): (1) the discovery document, (2) its issuer equals ours,
 * (3) every configured signing algorithm is supported, (4) the JWKS answers with keys, (5) the authorization
 * (GET) and token (POST) endpoints answer at all. Returns every reason found; [] means valid.
 */
export async function validateDiscoveredConfig(
  input: OidcAttributesInput,
  options: { timeoutMs?: number } = {},
): Promise<string[]> {
  const attrs = toOidcAttributes(input);
  if (!attrs.issuer) return ["no issuer is configured"];
  const http = providerHttp(attrs, options.timeoutMs ?? defaultTimeoutMs);
  const reasons: string[] = [];
  try {
    let config: DiscoveredConfig;
    try {
      config = await fetchDiscovery(http, attrs.issuer, requiredDiscoveryFields);
    } catch (err) {
      return [`discovery failed: ${describe(err)}`];
    }
    if (config.issuer !== attrs.issuer) {
      reasons.push(
        `issuer mismatch: the provider says ${JSON.stringify(config.issuer)}, the auth method has ${
          JSON.stringify(attrs.issuer)
        }`,
      );
    }
    const supported = config.id_token_signing_alg_values_supported ?? [];
    for (const alg of attrs.signing_algorithms ?? []) {
      if (!supported.includes(alg)) {
        reasons.push(
          `signing algorithm ${JSON.stringify(alg)} is not supported by the provider (${
            supported.join(", ")
          })`,
        );
      }
    }
    try {
      await fetchJwks(http, config.jwks_uri);
    } catch (err) {
      reasons.push(describe(err));
    }
    for (
      const [name, url, method] of [
        ["authorization_endpoint", config.authorization_endpoint, "GET"],
        ["token_endpoint", config.token_endpoint, "POST"],
      ] as const
    ) {
      try {
        const res = await http.fetch(url, { method });
        await res.body?.cancel();
      } catch (err) {
        reasons.push(`${name} unreachable: ${describe(err)}`);
      }
    }
    return reasons;
  } finally {
    http.close();
  }
}

export interface AuthUrlParams {
  state: string;
  nonce: string;
  /** base64url(SHA-256(code_verifier)). */
  codeChallenge: string;
  redirectUri: string;
  timeoutMs?: number;
}

/** The provider's authorization URL for a new attempt. Throws when discovery fails. */
export async function buildAuthUrl(input: OidcAttributesInput, params: AuthUrlParams): Promise<string> {
  const attrs = toOidcAttributes(input);
  const config = await discoverShared(attrs, params.timeoutMs ?? defaultTimeoutMs);
  const url = new URL(config.authorization_endpoint);
  const scopes = ["openid", ...(attrs.claims_scopes ?? []).filter((s) => s !== "openid")];
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", attrs.client_id ?? "");
  url.searchParams.set("redirect_uri", params.redirectUri);
  url.searchParams.set("scope", scopes.join(" "));
  url.searchParams.set("state", params.state);
  url.searchParams.set("nonce", params.nonce);
  if (attrs.max_age !== undefined) url.searchParams.set("max_age", String(attrs.max_age));
  if (attrs.prompts?.length) url.searchParams.set("prompt", attrs.prompts.join(" "));
  url.searchParams.set("code_challenge", params.codeChallenge);
  url.searchParams.set("code_challenge_method", "S256");
  return url.toString();
}
