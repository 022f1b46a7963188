// Validates a login JWT as Nomad does (its lib/auth/jwt over hashicorp/cap): signature, algorithm, audience,
// the time claims with their leeways, then the bound issuers (docs/events.md#sso-login).

import { jwsAlgorithms } from "../../lib/jws_algorithms.ts";
import type { StoredAuthMethod } from "./acl_sso_model.ts";
import { type ProviderCache, SignatureError } from "./acl_sso_keys.ts";

/** cap's DefaultLeewaySeconds: the leeway used to invent a missing exp or nbf when the method sets none. */
const defaultLeewaySeconds = 150;
/** go-jose's DefaultLeeway: the clock skew allowed when ClockSkewLeeway is zero. */
const defaultClockSkewSeconds = 60;
const supportedAlgs = new Set(jwsAlgorithms);
const registeredClaims = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti"];

/** Why a token was refused; the login answers 401 `unable to validate provided token: <message>`. */
export class TokenInvalid extends Error {}

/** A leeway in seconds as cap reads it: negative means none, zero means the default. */
function leewaySeconds(ns: number, fallback: number): number {
  if (ns < 0) return 0;
  if (ns === 0) return fallback;
  return ns / 1e9;
}

function numericDate(claims: Record<string, unknown>, name: string): number {
  const v = claims[name];
  if (v === undefined || v === null) return 0;
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new Error(`json: cannot unmarshal ${typeof v} into Go struct field Claims.${name} of type float64`);
  }
  return Math.trunc(v);
}

/** cap's checks after the signature, in its order; throws the reason. */
function checkClaims(
  method: StoredAuthMethod,
  claims: Record<string, unknown>,
  alg: string,
  now: number,
): void {
  for (const key of Object.keys(claims)) {
    const registered = registeredClaims.find((r) => r !== key && r === key.toLowerCase());
    if (registered) {
      throw new Error(
        `ambiguous claim: key "${key}" collides with registered claim "${registered}" under case folding`,
      );
    }
  }
  const c = method.Config;
  const algs = c.SigningAlgs?.length ? c.SigningAlgs : ["RS256"];
  const unsupported = algs.find((a) => !supportedAlgs.has(a));
  if (unsupported) {
    throw new Error(
      `invalid algorithm (alg) header parameter: unsupported signing algorithm "${unsupported}"`,
    );
  }
  if (!algs.includes(alg)) {
    throw new Error("invalid algorithm (alg) header parameter: token signed with unexpected algorithm");
  }
  const aud = claims.aud;
  const audiences = typeof aud === "string"
    ? [aud]
    : Array.isArray(aud)
    ? aud.filter((a) => typeof a === "string")
    : [];
  if (c.BoundAudiences?.length && !c.BoundAudiences.some((a) => audiences.includes(a))) {
    throw new Error("invalid audience (aud) claim: audience claim does not match any expected audience");
  }
  const iat = numericDate(claims, "iat");
  let exp = numericDate(claims, "exp");
  let nbf = numericDate(claims, "nbf");
  if (iat === 0 && exp === 0 && nbf === 0) {
    throw new Error("no issued at (iat), not before (nbf), or expiration time (exp) claims in token");
  }
  if (exp === 0) exp = Math.max(iat, nbf) + leewaySeconds(c.ExpirationLeewayNs, defaultLeewaySeconds);
  if (nbf === 0) nbf = iat !== 0 ? iat : exp - leewaySeconds(c.NotBeforeLeewayNs, defaultLeewaySeconds);
  const skew = leewaySeconds(c.ClockSkewLeewayNs, defaultClockSkewSeconds) * 1000;
  if (now + skew < nbf * 1000) throw new Error("invalid not before (nbf) claim: token not yet valid");
  if (now - skew > exp * 1000) throw new Error("invalid expiration time (exp) claim: token is expired");
  if (iat !== 0 && now + skew < iat * 1000) {
    throw new Error("invalid issued at (iat) claim: token issued in the future");
  }
}

/** The verified claims of `token` for a JWT auth method; throws TokenInvalid with Nomad's reason. */
export async function validateJwt(
  providers: ProviderCache,
  method: StoredAuthMethod,
  token: string,
): Promise<Record<string, unknown>> {
  let claims: Record<string, unknown>;
  try {
    const { payload, alg } = await providers.verifySignature(method, token);
    const parsed = JSON.parse(new TextDecoder().decode(payload));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new Error("the token's payload is not a JSON object");
    }
    claims = parsed as Record<string, unknown>;
    checkClaims(method, claims, alg, Date.now());
  } catch (err) {
    const reason = err instanceof SignatureError || err instanceof Error ? err.message : String(err);
    throw new TokenInvalid(`unable to verify signature of JWT token: ${reason}`);
  }
  const bound = method.Config.BoundIssuer ?? [];
  if (bound.length) {
    if (!Object.hasOwn(claims, "iss")) {
      throw new TokenInvalid(
        "auth method specifies BoundIssuers but the provided token does not contain issuer information",
      );
    }
    if (typeof claims.iss !== "string") {
      throw new TokenInvalid("unable to read iss property of provided token");
    }
    if (!bound.includes(claims.iss)) throw new TokenInvalid(`invalid JWT issuer: ${claims.iss}`);
  }
  return claims;
}
