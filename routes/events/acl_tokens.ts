// ACL token endpoints: create, update, read (incl. self), list and delete, each write one durable batch.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import { uuid } from "../../lib/ids.ts";
import {
  bodyField,
  contentHash,
  renderToken,
  renderTokenStub,
  rfc3339,
  type StoredToken,
  tokenCollection,
} from "./acl_model.ts";
import { type AclState, permissionDenied, tokenHmacPurpose, tokenSealPurpose } from "./acl_state.ts";
import { decodeObjectBody, emptyOk, nomadJson, requireAclsEnabled } from "./acl_http.ts";
import { invalidToken, parseTokenInput, type TokenLimits } from "./acl_token_input.ts";
import { resolveRoleLinks } from "./acl_token_roles.ts";
import { oneTimeLock, oneTimeTokenRemoval } from "./acl_onetime.ts";
import { applyListFilter } from "./list_filter.ts";

export function tokenEvent(
  acl: AclState,
  type: "ACLTokenUpserted" | "ACLTokenDeleted",
  token: StoredToken,
): EventInput {
  return {
    Topic: "ACLToken",
    Type: type,
    Key: token.AccessorID,
    Payload: { ACLToken: renderToken(token, "", acl.roleLinks(token)) },
  };
}

/** Over the fields a caller sets; role IDs join only when there are some, so older hashes stay as they were. */
export function tokenHash(
  t: Pick<StoredToken, "Name" | "Type" | "Policies" | "Roles" | "Global" | "ExpirationTime">,
): string {
  const fields: unknown[] = [t.Name, t.Type, t.Policies, t.Global, t.ExpirationTime];
  if (t.Roles?.length) fields.push(t.Roles);
  return contentHash(fields);
}

/** Builds a stored token with a fresh (or given) secret: only its HMAC and a sealed copy are kept. */
export function newStoredToken(
  ctx: AppContext,
  fields: Omit<StoredToken, "SecretHmac" | "SecretSealed" | "Hash">,
  secretId: string,
): StoredToken {
  const t = {
    ...fields,
    Hash: "",
    SecretHmac: ctx.data.keys.hmac(tokenHmacPurpose, secretId),
    SecretSealed: ctx.data.keys.seal(tokenSealPurpose, secretId, fields.AccessorID),
  };
  t.Hash = tokenHash(t);
  return t;
}

/** The step of a commit that creates a token at the commit's index: the new document and its event. */
export function tokenCreation(
  ctx: AppContext,
  acl: AclState,
  fields: Omit<StoredToken, "SecretHmac" | "SecretSealed" | "Hash" | "CreateIndex" | "ModifyIndex">,
  secretId: string,
) {
  return (index: number) => {
    const token = newStoredToken(ctx, { ...fields, CreateIndex: index, ModifyIndex: index }, secretId);
    return {
      writes: [{ collection: tokenCollection, id: token.AccessorID, doc: { ...token }, ifVersion: 0 }],
      events: [tokenEvent(acl, "ACLTokenUpserted", token)],
      result: token,
    };
  };
}

const anonymousToken = {
  AccessorID: "anonymous",
  SecretID: "",
  Name: "Anonymous Token",
  Type: "client",
  Policies: ["anonymous"],
  Roles: null,
  Global: false,
  Hash: contentHash(["Anonymous Token", "client", ["anonymous"], false, null]),
  CreateTime: "0001-01-01T00:00:00Z",
  ExpirationTime: null,
  ExpirationTTL: "",
  CreateIndex: 0,
  ModifyIndex: 0,
};

export function createAclTokenRoutes(ctx: AppContext, acl: AclState, limits: TokenLimits): Route[] {
  const { store } = ctx.data;

  async function create(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const now = Date.now();
    const input = parseTokenInput(await decodeObjectBody(req), limits, now);
    const accessorId = input.accessorId ?? uuid();
    const secretId = input.secretId ?? uuid();
    const hmac = ctx.data.keys.hmac(tokenHmacPurpose, secretId);
    const { result } = await store.transact(
      [`${tokenCollection}/${accessorId}`, `cluster/acl_secret/${hmac}`],
      () => {
        if (store.get(tokenCollection, accessorId)) throw invalidToken("accessor ID already in use");
        if (acl.tokenBySecret(secretId)) throw invalidToken("secret ID already in use");
        const roles = resolveRoleLinks(acl, input.roles);
        return tokenCreation(ctx, acl, {
          AccessorID: accessorId,
          Name: input.name,
          Type: input.type as StoredToken["Type"],
          Policies: input.policies.length ? input.policies : null,
          Roles: roles.length ? roles : null,
          Global: input.global ?? false,
          CreateTime: rfc3339(now),
          ExpirationTime: input.expiresAt !== undefined ? rfc3339(input.expiresAt) : null,
          ExpirationTTL: input.ttlText,
        }, secretId);
      },
    );
    return nomadJson(renderToken(result, secretId, acl.roleLinks(result)), result.ModifyIndex, false);
  }

  async function update(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const accessorId = req.params.accessor!;
    const body = await decodeObjectBody(req);
    const given = bodyField(body, "AccessorID");
    if (given !== undefined && given !== null && given !== "" && given !== accessorId) {
      throw new ApiError(400, "Token Accessor ID does not match request path");
    }
    const input = parseTokenInput(
      { ...body, AccessorID: undefined, SecretID: undefined },
      { minTtlMs: -Infinity, maxTtlMs: Infinity },
      Date.now(),
    );
    const { result } = await store.transact([`${tokenCollection}/${accessorId}`], () => {
      const current = acl.tokenByAccessor(accessorId);
      if (!current) throw new ApiError(400, `cannot find token ${accessorId}`);
      if (input.global !== undefined && input.global !== current.Global) {
        throw invalidToken("cannot toggle global value");
      }
      const currentExpiry = current.ExpirationTime ? Date.parse(current.ExpirationTime) : undefined;
      if (input.expiresAt !== undefined && input.ttlText === "" && input.expiresAt !== currentExpiry) {
        throw invalidToken("cannot update expiration time");
      }
      if (input.ttlText !== "" && input.ttlText !== current.ExpirationTTL) {
        throw invalidToken("cannot update expiration TTL");
      }
      const roles = resolveRoleLinks(acl, input.roles);
      return (index: number) => {
        const token: StoredToken = {
          ...current,
          Name: input.name,
          Type: input.type as StoredToken["Type"],
          Policies: input.policies.length ? input.policies : null,
          Roles: roles.length ? roles : null,
          ModifyIndex: index,
        };
        token.Hash = tokenHash(token);
        return {
          writes: [{ collection: tokenCollection, id: accessorId, doc: { ...token } }],
          events: [tokenEvent(acl, "ACLTokenUpserted", token)],
          result: token,
        };
      };
    });
    return nomadJson(
      renderToken(result, acl.openSecret(result), acl.roleLinks(result)),
      result.ModifyIndex,
      false,
    );
  }

  function read(req: RequestContext): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    const accessorId = req.params.accessor!;
    if (!caller.acl.management && caller.accessorId !== accessorId) throw permissionDenied();
    const token = acl.tokenByAccessor(accessorId);
    if (!token) throw new ApiError(404, "ACL token not found");
    return nomadJson(
      renderToken(token, acl.openSecret(token), acl.roleLinks(token)),
      acl.tableIndex(tokenCollection),
      true,
    );
  }

  function self(req: RequestContext): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    const index = acl.tableIndex(tokenCollection);
    if (caller.accessorId === "anonymous") return nomadJson(anonymousToken, index, true);
    const token = acl.tokenByAccessor(caller.accessorId);
    if (!token) throw new ApiError(403, "ACL token not found");
    return nomadJson(renderToken(token, acl.openSecret(token), acl.roleLinks(token)), index, true);
  }

  function list(req: RequestContext): Response {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    // `prefix` narrows by accessor ID, as Nomad's ACLTokenByAccessorIDPrefix does.
    const prefix = req.url.searchParams.get("prefix") ?? "";
    const tokens = [...store.list<StoredToken>(tokenCollection)].map((s) => s.doc)
      .filter((t) => t.AccessorID.startsWith(prefix));
    tokens.sort((a, b) => (a.AccessorID < b.AccessorID ? -1 : a.AccessorID > b.AccessorID ? 1 : 0));
    return nomadJson(
      applyListFilter(req.url, tokens.map((t) => renderTokenStub(t, acl.roleLinks(t)))),
      acl.tableIndex(tokenCollection),
      true,
    );
  }

  async function remove(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const accessorId = req.params.accessor!;
    const locks = [`${tokenCollection}/${accessorId}`, oneTimeLock(accessorId)];
    const { index } = await store.transact(locks, () => {
      const current = acl.tokenByAccessor(accessorId);
      if (!current) throw new ApiError(400, `Cannot delete nonexistent tokens: ${accessorId}`);
      return {
        // Its one-time token goes with it (an exchange would find no token anyway).
        writes: [
          { collection: tokenCollection, id: accessorId, doc: null },
          ...oneTimeTokenRemoval(ctx, accessorId),
        ],
        events: [tokenEvent(acl, "ACLTokenDeleted", current)],
      };
    });
    return emptyOk(index);
  }

  const accessor = "/v1/acl/token/:accessor([^/]+)";
  return [
    { method: ["POST", "PUT"], path: "/v1/acl/token", handler: create },
    { method: "GET", path: "/v1/acl/token/self", handler: self },
    // Nomad answers writes to token/self as a wrong method, not as an accessor named "self".
    {
      method: ["POST", "PUT", "DELETE"],
      path: "/v1/acl/token/self",
      handler: () => {
        throw new ApiError(405, "Invalid method", { headers: { Allow: "GET" } });
      },
    },
    { method: "GET", path: "/v1/acl/tokens", handler: list },
    { method: ["POST", "PUT"], path: accessor, handler: update },
    { method: "GET", path: accessor, handler: read },
    { method: "DELETE", path: accessor, handler: remove },
  ];
}
