// OIDC login for `nomad login` (docs/events.md#sso-login): `PUT /v1/acl/oidc/auth-url` answers the provider's
// authorization URL (state, nonce, PKCE S256), `PUT /v1/acl/oidc/complete-auth` exchanges the code, verifies
// the ID token, reads UserInfo and mints the token through the method's binding rules.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { randomSecret } from "../../lib/ids.ts";
import { redeemCode } from "../../lib/oidc/code_exchange.ts";
import { pkceChallenge } from "../../lib/oidc/pkce.ts";
import { readProviderJson } from "../../lib/oidc/provider_json.ts";
import { renderToken } from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { decodeObjectBody, nomadJson, requireAclsEnabled } from "./acl_http.ts";
import type { StoredAuthMethod } from "./acl_sso_model.ts";
import type { SsoState } from "./acl_sso_state.ts";
import type { Discovery, ProviderCache } from "./acl_sso_keys.ts";
import { loginFields, loginMethod } from "./acl_sso_login.ts";
import { mintLoginToken } from "./acl_sso_mint.ts";
import { type OidcRequest, OidcRequests } from "./acl_sso_oidc_requests.ts";

/** Longest client nonce kept for a pending login (the CLI's are far shorter). */
export const maxClientNonceLength = 256;
/** Clock skew allowed on the ID token's exp and iat. */
const idTokenSkewSeconds = 60;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The fields both OIDC requests start with, and what Nomad says when they are missing. */
const methodAndNonce = { AuthMethodName: "missing auth method name", ClientNonce: "missing client nonce" };

function oidcMethod(sso: SsoState, name: string): StoredAuthMethod {
  const method = loginMethod(sso, name);
  if (method.Type !== "OIDC") throw new ApiError(400, `unsupported auth-method type: ${method.Type}`);
  return method;
}

export function createAclOidcRoutes(
  ctx: AppContext,
  acl: AclState,
  sso: SsoState,
  providers: ProviderCache,
  startsPerMinute: number,
): { routes: Route[]; requests: OidcRequests } {
  const requests = new OidcRequests(ctx, startsPerMinute);

  /** The method's discovery document; 502 when the provider cannot give it. */
  async function discover(method: StoredAuthMethod) {
    try {
      return await providers.discovery(method);
    } catch (err) {
      throw new ApiError(502, `failed to generate OIDC provider: ${describe(err)}`);
    }
  }

  async function authUrl(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const f = loginFields(await decodeObjectBody(req), "ACLOIDCAuthURLRequest", "OIDC auth-url", {
      ...methodAndNonce,
      RedirectURI: "missing redirect URI",
    });
    if (f.ClientNonce!.length > maxClientNonceLength) {
      throw new ApiError(
        400,
        `error storing OIDC request: client nonce longer than ${maxClientNonceLength} characters`,
      );
    }
    const method = oidcMethod(sso, f.AuthMethodName!);
    if (!(method.Config.AllowedRedirectURIs ?? []).includes(f.RedirectURI!)) {
      throw new ApiError(400, `failed to generate auth URL: unauthorized redirect_uri: ${f.RedirectURI}`);
    }
    // The address's start is taken before the provider is asked: a refused start costs the provider nothing.
    const { request: pending, prepared: discovery } = await requests.loadOrAdd(
      f.ClientNonce!,
      req.clientIp,
      () => discover(method),
      () => ({
        authMethod: method.Name,
        methodHash: method.Hash,
        redirectUri: f.RedirectURI!,
        state: randomSecret(24),
        nonce: f.ClientNonce!,
        codeVerifier: randomSecret(32),
      }),
    );
    if (pending.authMethod !== method.Name || pending.redirectUri !== f.RedirectURI) {
      throw new ApiError(400, "error storing OIDC request: client nonce already in use");
    }
    let url: URL;
    try {
      url = new URL(discovery.authorization_endpoint);
    } catch {
      throw new ApiError(
        502,
        "failed to generate OIDC provider: discovery document has no authorization_endpoint URL",
      );
    }
    const scopes = ["openid", ...(method.Config.OIDCScopes ?? []).filter((s) => s !== "openid")];
    url.searchParams.set("client_id", method.Config.OIDCClientID);
    url.searchParams.set("code_challenge", await pkceChallenge(pending.codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    url.searchParams.set("nonce", pending.nonce);
    url.searchParams.set("redirect_uri", pending.redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", scopes.join(" "));
    url.searchParams.set("state", pending.state);
    return nomadJson({ AuthURL: url.toString() }, 0, false);
  }

  /** The code exchanged at the token endpoint; the ID token verified; UserInfo merged in. */
  async function exchange(
    method: StoredAuthMethod,
    discovery: Discovery,
    pending: OidcRequest,
    code: string,
  ) {
    const http = providers.http(method);
    const secret = sso.clientSecret(method);
    const tokens = await redeemCode(http, discovery.token_endpoint, {
      code,
      codeVerifier: pending.codeVerifier,
      redirectUri: pending.redirectUri,
      clientId: method.Config.OIDCClientID,
      clientSecret: secret,
      clientAuth: secret ? "basic" : "none",
    });
    if (typeof tokens.id_token !== "string") throw new Error("token endpoint: no id_token in the answer");
    const idClaims = await verifyIdToken(method, tokens.id_token, pending.nonce, discovery.issuer);
    let claims = idClaims;
    const accessToken = tokens.access_token;
    if (
      !method.Config.OIDCDisableUserInfo && discovery.userinfo_endpoint && typeof accessToken === "string"
    ) {
      const info = await readProviderJson(
        await http.fetch(discovery.userinfo_endpoint, {
          headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/json" },
        }),
        "userinfo",
        http.timeoutMs,
      );
      if (info.sub !== idClaims.sub) throw new Error("userinfo: sub does not match the ID token's");
      // Nomad's SelectorData: UserInfo claims override the ID token's, except iss and sub.
      claims = { ...idClaims, ...info, iss: idClaims.iss, sub: idClaims.sub };
    }
    return claims;
  }

  async function verifyIdToken(method: StoredAuthMethod, idToken: string, nonce: string, issuer: string) {
    const { payload, alg } = await providers.verifyWithDiscovery(method, idToken);
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    const c = method.Config;
    const algs = c.SigningAlgs?.length ? c.SigningAlgs : ["RS256"];
    if (!algs.includes(alg)) throw new Error(`id token signed with unexpected algorithm ${alg}`);
    if (claims.iss !== issuer) throw new Error("id token issued by a different provider");
    const aud = typeof claims.aud === "string" ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
    if (!aud.includes(c.OIDCClientID)) throw new Error("id token audience does not include the client ID");
    if (c.BoundAudiences?.length && !c.BoundAudiences.some((a) => aud.includes(a))) {
      throw new Error("id token audience does not match any bound audience");
    }
    const now = Date.now() / 1000;
    if (typeof claims.exp !== "number" || now - idTokenSkewSeconds > claims.exp) {
      throw new Error("id token is expired");
    }
    if (typeof claims.iat === "number" && now + idTokenSkewSeconds < claims.iat) {
      throw new Error("id token issued in the future");
    }
    if (claims.nonce !== nonce) throw new Error("id token nonce does not match");
    return claims;
  }

  async function completeAuth(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const f = loginFields(await decodeObjectBody(req), "ACLOIDCCompleteAuthRequest", "OIDC complete-auth", {
      ...methodAndNonce,
      State: "missing state",
      Code: "missing code",
      Iss: undefined,
      RedirectURI: "missing redirect URI",
    });
    const method = oidcMethod(sso, f.AuthMethodName!);
    requests.admitCompletion(req.clientIp);
    const discovery = await discover(method);
    if (discovery.authorization_response_iss_parameter_supported === true) {
      if (f.Iss !== method.Config.OIDCDiscoveryURL) {
        throw new ApiError(400, "invalid or missing issuer parameter in callback");
      }
    }
    // Single use: the pending request is gone whatever happens next.
    const pending = await requests.take(f.ClientNonce!);
    if (!pending || pending.authMethod !== method.Name || pending.methodHash !== method.Hash) {
      throw new ApiError(400, "no OIDC request found for client nonce");
    }
    if (pending.state !== f.State) {
      throw new ApiError(400, "failed to exchange token with provider: state parameter does not match");
    }
    let claims: Record<string, unknown>;
    try {
      claims = await exchange(method, discovery, pending, f.Code!);
    } catch (err) {
      throw new ApiError(401, `failed to exchange token with provider: ${describe(err)}`);
    }
    const { token, secretId } = await mintLoginToken(ctx, acl, sso, method, claims);
    return nomadJson(renderToken(token, secretId, acl.roleLinks(token)), token.ModifyIndex, false);
  }

  return {
    requests,
    routes: [
      { method: ["POST", "PUT"], path: "/v1/acl/oidc/auth-url", handler: authUrl },
      { method: ["POST", "PUT"], path: "/v1/acl/oidc/complete-auth", handler: completeAuth },
    ],
  };
}
