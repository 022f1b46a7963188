// ACL auth method endpoints (docs/events.md#sso-login): upsert (merged with the stored method and validated
// as Nomad does), read (management), list (anyone), delete; each write one durable commit with its event.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { contentHash, rfc3339 } from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { decodeObjectBody, nomadJson, requireAclsEnabled } from "./acl_http.ts";
import {
  type AuthMethodConfigInput,
  authMethodProblems,
  decodeAuthMethod,
  defaultTokenNameFormat,
  multiError,
} from "./acl_auth_method_input.ts";
import {
  authMethodCollection,
  type AuthMethodConfig,
  authMethodEvent,
  clientSecretSealPurpose,
  renderAuthMethod,
  renderAuthMethodStub,
  type StoredAuthMethod,
} from "./acl_sso_model.ts";
import { ssoLock, type SsoState } from "./acl_sso_state.ts";
import { readHandler, removeHandler, resourceRoutes, upsertStep } from "./acl_sso_routes.ts";

export interface TtlBounds {
  minTtlMs: number;
  maxTtlMs: number;
}

/** The word Nomad answers in place of a set client secret; sent back on an update it keeps the stored one. */
const redacted = "redacted";

export function createAclAuthMethodRoutes(
  ctx: AppContext,
  acl: AclState,
  sso: SsoState,
  ttl: TtlBounds,
): Route[] {
  const { store, keys } = ctx.data;

  /** The stored config: the secret sealed ("redacted" keeps the stored one) and an HMAC of it for the hash. */
  function storedConfig(name: string, c: AuthMethodConfigInput, previous: AuthMethodConfig | undefined) {
    const { OIDCClientSecret: given, ...rest } = c;
    let secret = given;
    if (given === redacted && previous?.OIDCClientSecretSealed) {
      secret = keys.open(clientSecretSealPurpose, previous.OIDCClientSecretSealed, name);
    }
    const sealed = secret === "" ? "" : keys.seal(clientSecretSealPurpose, secret, name);
    // The hash covers an HMAC of the secret, never the secret (the list, and its hashes, are public).
    const secretMark = secret === "" ? "" : keys.hmac(clientSecretSealPurpose, secret);
    return { config: { ...rest, OIDCClientSecretSealed: sealed } as AuthMethodConfig, secretMark };
  }

  /** A stored config as input again (for an update that sends no Config: Nomad keeps the stored one). */
  function configInput(c: AuthMethodConfig): AuthMethodConfigInput {
    const { OIDCClientSecretSealed: sealed, ...rest } = c;
    return { ...rest, OIDCClientSecret: sealed ? redacted : "" };
  }

  async function upsert(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const input = decodeAuthMethod(await decodeObjectBody(req));
    const pathName = req.params.key;
    if (pathName !== undefined && pathName !== input.name) {
      throw new ApiError(400, "ACL auth-method name does not match request path");
    }
    const { result } = await store.transact([ssoLock], () => {
      const existing = sso.authMethod(input.name);
      // Nomad's Merge: empty fields take the stored method's values (Default and Name never do).
      const merged = { ...input };
      if (existing) {
        merged.type ||= existing.Type;
        merged.tokenLocality ||= existing.TokenLocality;
        merged.tokenNameFormat ||= existing.TokenNameFormat;
        merged.maxTokenTtlNs ||= existing.MaxTokenTTLNs;
      }
      merged.tokenNameFormat ||= defaultTokenNameFormat;
      if (existing && !merged.config) merged.config = configInput(existing.Config);
      const problems = authMethodProblems(merged, ttl.minTtlMs * 1e6, ttl.maxTtlMs * 1e6);
      if (problems.length) throw new ApiError(400, `auth method 0 invalid: ${multiError(problems)}`);
      if (merged.isDefault) {
        const other = sso.authMethods().find((m) => m.Default && m.Name !== merged.name);
        if (other) throw new ApiError(400, `default method already exists: ${other.Name}`);
      }
      const now = Date.now();
      const { config, secretMark } = storedConfig(merged.name, merged.config!, existing?.Config);
      return (index: number) => {
        const method: StoredAuthMethod = {
          Name: merged.name,
          Type: merged.type as StoredAuthMethod["Type"],
          TokenLocality: merged.tokenLocality as StoredAuthMethod["TokenLocality"],
          TokenNameFormat: merged.tokenNameFormat,
          MaxTokenTTLNs: merged.maxTokenTtlNs,
          Default: merged.isDefault,
          Config: config,
          Hash: "",
          CreateTime: existing?.CreateTime ?? rfc3339(now),
          ModifyTime: rfc3339(now),
          CreateIndex: existing?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        const { OIDCClientSecretSealed: _sealed, ...hashed } = config;
        method.Hash = contentHash([
          method.Name,
          method.Type,
          method.TokenLocality,
          method.TokenNameFormat,
          method.MaxTokenTTLNs,
          method.Default,
          hashed,
          secretMark,
        ]);
        return upsertStep(
          authMethodCollection,
          method.Name,
          method,
          authMethodEvent("ACLAuthMethodUpserted", method),
        );
      };
    });
    return nomadJson(renderAuthMethod(result), result.ModifyIndex, false);
  }

  const read = readHandler(
    acl,
    (name) => sso.authMethod(name),
    "ACL auth-method not found",
    renderAuthMethod,
  );

  function list(): Response {
    requireAclsEnabled(acl);
    // Nomad lists auth methods to anyone: `nomad login` needs them before it has a token.
    return nomadJson(sso.authMethods().map(renderAuthMethodStub), sso.tableIndex(authMethodCollection), true);
  }

  const deleted = (m: StoredAuthMethod) => authMethodEvent("ACLAuthMethodDeleted", m);
  const remove = removeHandler(acl, sso, authMethodCollection, "ACL auth method not found", deleted);
  return resourceRoutes("/v1/acl/auth-method", { list, upsert, read, remove });
}
