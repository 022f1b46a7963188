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

/**
 * The string fields of a login body ("" when absent; Nomad's decode words on a wrong type), `fields` mapping
 * each name to the reason its absence gives (undefined: optional). Every absent one is named at once:
 * 400 `invalid <what> request: N errors occurred: …`, as Nomad's request Validate.
 */
export function loginFields(
  body: Record<string, unknown>,
  struct: string,
  what: string,
  fields: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, reason] of Object.entries(fields)) {
    out[name] = optionalString(struct, name, bodyField(body, name)) ?? "";
    if (out[name] === "" && reason !== undefined) missing.push(reason);
  }
  if (missing.length) throw new ApiError(400, `invalid ${what} request: ${multiError(missing)}`);
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
    const f = loginFields(await decodeObjectBody(req), "ACLLoginRequest", "login", {
      AuthMethodName: "missing auth method name",
      LoginToken: "missing login token",
    });
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
