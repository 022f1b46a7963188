// The OIDC callback's code exchange: token endpoint with PKCE and client authentication, ID token
// validation with jose (JWKS signature, alg, iss, aud/azp, exp/iat, nonce, auth_time vs max_age), userinfo.

import {
  createLocalJWKSet,
  errors as joseErrors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from "jose";
import { constantTimeEqual } from "../../../lib/crypto.ts";
import { redeemCode } from "../../../lib/oidc/code_exchange.ts";
import { fetchJwks } from "../../../lib/oidc/jwks.ts";
import { OidcProviderError } from "../../../lib/oidc/provider_http.ts";
import { readProviderJson } from "../../../lib/oidc/provider_json.ts";
import {
  type DiscoveredConfig,
  discoverVerified,
  type OidcAttributesInput,
  type OidcMethodAttributes,
  type ProviderHttp,
  providerHttp,
  toOidcAttributes,
} from "./oidc_client_http.ts";

export type ExchangeResult =
  | {
    ok: true;
    claims: Record<string, unknown>;
    idToken: Record<string, unknown>;
    userinfo: Record<string, unknown>;
  }
  | { ok: false; reason: "idp_error" | "token_validation_failed"; message: string };

export interface ExchangeParams {
  code: string;
  codeVerifier: string;
  nonce: string;
  redirectUri: string;
  timeoutMs?: number;
}

/** Clock skew allowed on exp, iat, nbf and auth_time (docs/auth-methods.md#oidc). */
const leewaySeconds = 60;

class ValidationFailure extends Error {}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function clientAuth(config: DiscoveredConfig): "basic" | "post" {
  const offered = config.token_endpoint_auth_methods_supported;
  if (offered && !offered.includes("client_secret_basic") && offered.includes("client_secret_post")) {
    return "post";
  }
  return "basic";
}

async function verifySignature(
  http: ProviderHttp,
  config: DiscoveredConfig,
  attrs: OidcMethodAttributes,
  idToken: string,
): Promise<JWTPayload> {
  const algorithms = attrs.signing_algorithms?.length ? attrs.signing_algorithms : ["RS256"];
  const options = {
    algorithms,
    issuer: attrs.issuer!,
    audience: attrs.client_id!,
    clockTolerance: leewaySeconds,
    requiredClaims: ["iss", "sub", "aud", "exp", "iat"],
  };
  const verify = async (jwks: JSONWebKeySet) =>
    (await jwtVerify(idToken, createLocalJWKSet(jwks), options)).payload;
  try {
    return await verify(await fetchJwks(http, config.jwks_uri));
  } catch (err) {
    // A key rotated since the provider signed: fetch the JWKS once more before giving up.
    if (err instanceof joseErrors.JWKSNoMatchingKey) {
      return await verify(await fetchJwks(http, config.jwks_uri));
    }
    throw err;
  }
}

function checkClaims(payload: JWTPayload, attrs: OidcMethodAttributes, nonce: string): void {
  const aud = typeof payload.aud === "string" ? [payload.aud] : payload.aud ?? [];
  const allowed = attrs.allowed_audiences ?? [];
  if (allowed.length && !aud.some((a) => allowed.includes(a))) {
    throw new ValidationFailure(`no audience of the ID token is in allowed_audiences`);
  }
  const azp = payload.azp;
  if (azp !== undefined && azp !== attrs.client_id) throw new ValidationFailure("azp is not our client_id");
  if (aud.length > 1 && azp === undefined) throw new ValidationFailure("several audiences and no azp");
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.iat === "number" && payload.iat > now + leewaySeconds) {
    throw new ValidationFailure("ID token issued in the future");
  }
  if (typeof payload.nonce !== "string" || !constantTimeEqual(payload.nonce, nonce)) {
    throw new ValidationFailure("nonce does not match the authentication attempt");
  }
  if (attrs.max_age !== undefined) {
    const authTime = payload.auth_time;
    if (typeof authTime !== "number") throw new ValidationFailure("auth_time missing while max_age is set");
    if (now - authTime > attrs.max_age + leewaySeconds) {
      throw new ValidationFailure("authentication is older than max_age");
    }
  }
}

async function fetchUserinfo(
  http: ProviderHttp,
  config: DiscoveredConfig,
  accessToken: string,
  sub: string,
): Promise<Record<string, unknown>> {
  const res = await http.fetch(config.userinfo_endpoint!, {
    headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
  });
  if (res.status === 200 && !(res.headers.get("content-type") ?? "").includes("json")) {
    // A signed/encrypted userinfo JWT: the ID token's claims stand on their own.
    await res.body?.cancel();
    return {};
  }
  const info = await readProviderJson(res, "userinfo", http.timeoutMs);
  if (info.sub !== sub) throw new ValidationFailure("userinfo sub differs from the ID token sub");
  return info;
}

/** Redeems the authorization code and validates the ID token; claims = ID token claims, userinfo merged. */
export async function exchangeCode(
  input: OidcAttributesInput,
  params: ExchangeParams,
): Promise<ExchangeResult> {
  const attrs = toOidcAttributes(input);
  const http = providerHttp(attrs, params.timeoutMs ?? 10_000);
  try {
    const config = await discoverVerified(http, attrs);
    const tokens = await redeemCode(http, config.token_endpoint, {
      code: params.code,
      codeVerifier: params.codeVerifier,
      redirectUri: params.redirectUri,
      clientId: attrs.client_id ?? "",
      clientSecret: attrs.client_secret ?? "",
      clientAuth: clientAuth(config),
    });
    const idToken = tokens.id_token;
    if (typeof idToken !== "string") throw new ValidationFailure("token response has no id_token");
    let payload: JWTPayload;
    try {
      payload = await verifySignature(http, config, attrs, idToken);
    } catch (err) {
      if (err instanceof OidcProviderError) throw err;
      throw new ValidationFailure(`ID token rejected: ${describe(err)}`);
    }
    checkClaims(payload, attrs, params.nonce);
    let claims: Record<string, unknown> = { ...payload };
    let userinfo: Record<string, unknown> = {};
    if (config.userinfo_endpoint && typeof tokens.access_token === "string") {
      userinfo = await fetchUserinfo(http, config, tokens.access_token, payload.sub!);
      // The ID token's own identity claims win over anything userinfo says.
      claims = { ...claims, ...userinfo, sub: payload.sub, iss: payload.iss, aud: payload.aud };
    }
    return { ok: true, claims, idToken: { ...payload }, userinfo };
  } catch (err) {
    if (err instanceof ValidationFailure) {
      return { ok: false, reason: "token_validation_failed", message: err.message };
    }
    return { ok: false, reason: "idp_error", message: describe(err) };
  } finally {
    http.close();
  }
}
