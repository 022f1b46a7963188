// The last step of every SSO login (docs/events.md#sso-login): verified claims → mapped claims → binding rules
// → a new ACL token (management, or client with the bound policies and roles), expiring after the method's MaxTokenTTL.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import { uuid } from "../../lib/ids.ts";
import { policyCollection, rfc3339, type StoredToken, tokenCollection } from "./acl_model.ts";
import { tokenCreation } from "./acl_tokens.ts";
import { invalidToken } from "./acl_token_input.ts";
import { formatGoDuration } from "./duration.ts";
import { bind, mapClaims, tokenName } from "./acl_sso_claims.ts";
import type { StoredAuthMethod } from "./acl_sso_model.ts";
import type { SsoState } from "./acl_sso_state.ts";
import type { AclState } from "./acl_state.ts";

/** Turns the claims into a durable token; 400 `no role or policy bindings matched` when no rule grants anything. */
export async function mintLoginToken(
  ctx: AppContext,
  acl: AclState,
  sso: SsoState,
  method: StoredAuthMethod,
  claims: Record<string, unknown>,
): Promise<{ token: StoredToken; secretId: string }> {
  const { store } = ctx.data;
  const mapped = mapClaims(method, claims);
  const bindings = bind(method, sso.bindingRules(method.Name), mapped, {
    policyExists: (name) => store.get(policyCollection, name) !== undefined,
    roleExists: (name) => acl.roleByName(name) !== undefined,
    selectorOf: (rule) => sso.selectors.of(rule),
  });
  if (!bindings.management && bindings.policies.length === 0 && bindings.roles.length === 0) {
    throw new ApiError(400, "no role or policy bindings matched");
  }
  const name = tokenName(method, mapped);
  if (name.length > 256) throw invalidToken("token name too long");
  // Role bindings become links to the roles' IDs, resolved (and dropped once deleted) at request time.
  const roleIds = bindings.roles.flatMap((name) => acl.roleByName(name)?.ID ?? []);
  const accessorId = uuid();
  const secretId = uuid();
  const now = Date.now();
  const { result } = await store.transact(
    [`${tokenCollection}/${accessorId}`],
    () =>
      tokenCreation(ctx, acl, {
        AccessorID: accessorId,
        Name: name,
        Type: bindings.management ? "management" : "client",
        Policies: bindings.management || !bindings.policies.length ? null : bindings.policies,
        Roles: bindings.management || !roleIds.length ? null : roleIds,
        Global: method.TokenLocality === "global",
        CreateTime: rfc3339(now),
        ExpirationTime: rfc3339(now + Math.floor(method.MaxTokenTTLNs / 1e6)),
        ExpirationTTL: formatGoDuration(method.MaxTokenTTLNs),
      }, secretId),
  );
  return { token: result, secretId };
}
