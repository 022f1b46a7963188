// `PUT /v1/acl/login`: a JWT from a JWT auth method exchanged for an ACL token (docs/events.md#sso-login).

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { bodyField, renderToken } from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { decodeObjectBody, nomadJson, optionalString, requireAclsEnabled } from "./acl_http.ts";
import { multiError } from "./acl_auth_method_input.ts";
import type { SsoState } from "./acl_sso_state.ts";
import type { ProviderCache } from "./acl_sso_keys.ts";
import { TokenInvalid, validateJwt } from "./acl_sso_jwt.ts";
import { mintLoginToken } from "./acl_sso_mint.ts";

/** The named fields of a login body as strings ("" when absent), in Nomad's decode words on a wrong type. */
export function loginFields(
  body: Record<string, unknown>,
  struct: string,
  names: string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) out[n] = optionalString(struct, n, bodyField(body, n)) ?? "";
  return out;
}

/** The auth method a login names: 400 `auth-method "x" not found` as Nomad answers. */
export function loginMethod(sso: SsoState, name: string) {
  const method = sso.authMethod(name);
  if (!method) throw new ApiError(400, `auth-method ${JSON.stringify(name)} not found`);
  return method;
}

export function createAclLoginRoutes(
  ctx: AppContext,
  acl: AclState,
  sso: SsoState,
  providers: ProviderCache,
): Route[] {
  async function login(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const f = loginFields(await decodeObjectBody(req), "ACLLoginRequest", ["AuthMethodName", "LoginToken"]);
    const missing: string[] = [];
    if (f.AuthMethodName === "") missing.push("missing auth method name");
    if (f.LoginToken === "") missing.push("missing login token");
    if (missing.length) throw new ApiError(400, `invalid login request: ${multiError(missing)}`);
    const method = loginMethod(sso, f.AuthMethodName!);
    if (method.Type !== "JWT") throw new ApiError(400, `unsupported auth-method type: ${method.Type}`);
    let claims: Record<string, unknown>;
    try {
      claims = await validateJwt(providers, method, f.LoginToken!);
    } catch (err) {
      if (err instanceof TokenInvalid) {
        throw new ApiError(401, `unable to validate provided token: ${err.message}`);
      }
      throw err;
    }
    const { token, secretId } = await mintLoginToken(ctx, acl, sso, method, claims);
    return nomadJson(renderToken(token, secretId, acl.roleLinks(token)), token.ModifyIndex, false);
  }

  return [{ method: ["POST", "PUT"], path: "/v1/acl/login", handler: login }];
}
