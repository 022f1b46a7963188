// /v1/users: one user per account; list (admin), read (self or admin), PATCH name/description/admin.

import { respondWithChildList } from "../lists/list_route.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import { assertAdminsRemain, emptyPlan } from "../cascade.ts";
import { assertIdFormat, collections, lockKeys } from "../common.ts";
import {
  fieldError,
  FieldErrors,
  forbidden,
  notFound,
  unauthenticated,
  versioned,
  versionMismatch,
} from "../errors.ts";
import { applyNameDescription, checkPatchKeys, fieldMask, patchWrite, requireVersion } from "../fields.ts";
import { resolveScopeId } from "../methods/methods.ts";
import { renderUser } from "../principals.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import type { UserDoc } from "../state.ts";

const readOnly = [
  "id",
  "scope",
  "scope_id",
  "created_time",
  "updated_time",
  "authorized_actions",
  "account_ids",
  "primary_account_id",
  "login_name",
  "full_name",
  "email",
];

function loadUser(svc: AuthService, ctx: RequestContext, selfMay: boolean) {
  const id = ctx.params.id!;
  assertIdFormat(id, ["u"]);
  const caller = svc.caller(ctx);
  if (caller.kind !== "user") throw unauthenticated();
  if (!caller.admin && !(selfMay && caller.userId === id)) throw forbidden();
  const stored = svc.state.get<UserDoc>(collections.users, id);
  if (!stored) throw notFound();
  return { id, caller, stored };
}

export function listUsers(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.requireAdmin(ctx);
  const raw = ctx.url.searchParams.get("scope_id");
  if (!raw) throw fieldError({ name: "scope_id", description: "This field is required." });
  const scope = resolveScopeId(svc, raw);
  const recursive = ctx.url.searchParams.get("recursive")?.toLowerCase() === "true" && scope.id === "global";
  const inScope = (s: string) => recursive || s === scope.id;
  return respondWithChildList<UserDoc>(svc, ctx, {
    resource: "user",
    collection: collections.users,
    caller,
    belongs: (user) => inScope(user.scope_id),
    tombstoneBelongs: (tombstone) => inScope(tombstone.scope_id),
    render: (u) => renderUser(svc.state, u, caller),
    queryParts: [scope.id, recursive],
  });
}

export function readUser(svc: AuthService, ctx: RequestContext): Response {
  const { caller, stored } = loadUser(svc, ctx, true);
  return json(renderUser(svc.state, stored, caller));
}

export async function updateUser(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored } = loadUser(svc, ctx, false);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  checkPatchKeys(body, ["name", "description", "admin", "version"], readOnly, errors);
  errors.throwIfAny();
  const version = requireVersion(body);
  const mask = fieldMask(ctx.url, body, (p) => ["name", "description", "admin"].includes(p));
  const next: UserDoc = { ...stored.doc };
  const values: Record<string, unknown> = {};
  for (const k of mask) values[k] = k in body ? body[k] : null;
  applyNameDescription(values, next, errors, new Set(mask));
  if (mask.includes("admin")) {
    const v = values.admin;
    if (v !== null && typeof v !== "boolean") errors.add("admin", "Expected a boolean value.");
    else if (v === true) next.admin = true;
    else delete next.admin;
  }
  errors.throwIfAny();
  if (stored.version !== version) throw versionMismatch(version, stored.version);
  await versioned(svc.state.store.transact([lockKeys.admins, `${collections.users}/${id}`], () => {
    const cur = svc.state.get<UserDoc>(collections.users, id);
    if (!cur) throw notFound();
    if (cur.version !== version) throw versionMismatch(version, cur.version);
    if (cur.doc.admin && !next.admin) assertAdminsRemain(svc.state, emptyPlan(), new Set([id]));
    return { writes: [patchWrite(collections.users, id, next, version)] };
  }));
  return json(renderUser(svc.state, svc.state.get<UserDoc>(collections.users, id)!, caller));
}
