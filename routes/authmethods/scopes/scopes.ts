// /v1/scopes: the fixed global scope and org scopes under it (list, create, read, update, delete).

import { prefixedId } from "../../../lib/ids.ts";
import { respondWithChildList } from "../lists/list_route.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { assertAdminsRemain, deleteMethod, emptyPlan } from "../cascade.ts";
import { assertIdFormat, collections, lockKeys, nowIso, omitZero } from "../common.ts";
import { fieldError, FieldErrors, notFound, versioned, versionMismatch } from "../errors.ts";
import {
  applyNameDescription,
  checkCreateVersion,
  checkPatchKeys,
  fieldMask,
  patchWrite,
  rejectReadOnly,
  requireVersion,
} from "../fields.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import type { ActorCaller, MethodDoc, ScopeDoc } from "../state.ts";

const readOnly = ["id", "scope", "type", "created_time", "updated_time", "authorized_actions"];

export function renderScope(s: StoredDoc<ScopeDoc>, caller: ActorCaller): Record<string, unknown> {
  const admin = caller.kind === "user" && caller.admin;
  return omitZero({
    id: s.id,
    scope_id: s.doc.parent_scope_id,
    scope: s.doc.parent_scope_id
      ? { id: "global", type: "global", name: "global", description: "Global Scope" }
      : undefined,
    name: s.doc.name,
    description: s.doc.description,
    created_time: s.doc.created_time,
    updated_time: s.doc.updated_time,
    version: s.version,
    type: s.doc.type,
    primary_auth_method_id: s.doc.primary_auth_method_id,
    authorized_actions: admin
      ? ["no-op", "read", "update", ...(s.id === "global" ? [] : ["delete"])]
      : ["read"],
  });
}

function loadScope(svc: AuthService, ctx: RequestContext, admin: boolean) {
  const id = ctx.params.id!;
  if (id !== "global") assertIdFormat(id, ["o"]);
  const caller = admin ? svc.requireAdmin(ctx) : svc.requireUser(ctx);
  return {
    id,
    caller,
    stored: () =>
      svc.state.scope(id) ?? (() => {
        throw notFound();
      })(),
  };
}

export function listScopes(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.requireUser(ctx);
  const parent = ctx.url.searchParams.get("scope_id") ?? "global";
  if (parent !== "global") {
    if (!/^o_[A-Za-z0-9]+$/.test(parent)) {
      throw fieldError({
        name: "scope_id",
        description: "This field must be 'global' or a valid org scope id.",
      });
    }
    if (!svc.state.scope(parent)) throw notFound();
  }
  return respondWithChildList<ScopeDoc>(svc, ctx, {
    resource: "scope",
    collection: collections.scopes,
    caller,
    belongs: (scope) => scope.parent_scope_id === parent,
    tombstoneBelongs: (tombstone) => tombstone.scope_id === parent,
    render: (s) => renderScope(s, caller),
    queryParts: [parent],
  });
}

export async function createScope(svc: AuthService, ctx: RequestContext): Promise<Response> {
  svc.requireAdmin(ctx);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  rejectReadOnly(body, readOnly, errors);
  checkCreateVersion(body, errors);
  if (body.scope_id !== "global") {
    errors.add("scope_id", "Org scopes can only be created in the global scope.");
  }
  const named: { name?: string; description?: string } = {};
  applyNameDescription(body, named, errors);
  errors.throwIfAny();
  const id = prefixedId("o");
  await svc.state.store.transact(["auth/scopenames"], () => {
    if (named.name && nameInUse(svc, named.name, id)) {
      throw fieldError({ name: "name", description: "Name is already in use." });
    }
    const now = nowIso();
    const doc: ScopeDoc = {
      type: "org",
      ...named,
      parent_scope_id: "global",
      created_time: now,
      updated_time: now,
    };
    return { writes: [{ collection: collections.scopes, id, doc, ifVersion: 0 }] };
  });
  return json(renderScope(svc.state.scope(id)!, svc.caller(ctx)));
}

function nameInUse(svc: AuthService, name: string, exceptId: string): boolean {
  for (const s of svc.state.list<ScopeDoc>(collections.scopes)) {
    if (s.id !== exceptId && s.doc.name === name) return true;
  }
  return false;
}

export function readScope(svc: AuthService, ctx: RequestContext): Response {
  const { caller, stored } = loadScope(svc, ctx, false);
  return json(renderScope(stored(), caller));
}

export async function updateScope(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored } = loadScope(svc, ctx, true);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  checkPatchKeys(
    body,
    ["name", "description", "primary_auth_method_id", "version", "scope_id"],
    readOnly,
    errors,
  );
  errors.throwIfAny();
  const version = requireVersion(body);
  const mask = fieldMask(ctx.url, body, (p) => ["name", "description", "primary_auth_method_id"].includes(p));
  const current = stored();
  if ("scope_id" in body && body.scope_id !== (current.doc.parent_scope_id ?? undefined)) {
    errors.add("scope_id", "This field is read only.");
  }
  const next: ScopeDoc = { ...current.doc };
  const values: Record<string, unknown> = {};
  for (const k of mask) values[k] = k in body ? body[k] : null;
  if (id === "global" && (mask.includes("name") || mask.includes("description"))) {
    errors.add(
      mask.includes("name") ? "name" : "description",
      "The global scope's name and description are fixed.",
    );
  }
  applyNameDescription(values, next, errors, new Set(mask));
  if (mask.includes("primary_auth_method_id")) {
    const v = values.primary_auth_method_id;
    if (v === null || v === "") delete next.primary_auth_method_id;
    else if (typeof v !== "string" || svc.state.method(v)?.doc.scope_id !== id) {
      errors.add("primary_auth_method_id", "Must be the id of an auth method in this scope.");
    } else next.primary_auth_method_id = v;
  }
  errors.throwIfAny();
  if (current.version !== version) throw versionMismatch(version, current.version);
  await versioned(svc.state.store.transact([lockKeys.scope(id), "auth/scopenames"], () => {
    if (next.name && nameInUse(svc, next.name, id)) {
      throw fieldError({ name: "name", description: "Name is already in use." });
    }
    // Method deletes hold this scope's lock: checked again here, the primary cannot be a deleted method.
    const primary = next.primary_auth_method_id;
    if (primary !== undefined && svc.state.method(primary)?.doc.scope_id !== id) {
      throw fieldError({
        name: "primary_auth_method_id",
        description: "Must be the id of an auth method in this scope.",
      });
    }
    return { writes: [patchWrite(collections.scopes, id, next, version)] };
  }));
  return json(renderScope(svc.state.scope(id)!, caller));
}

export async function deleteScope(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored } = loadScope(svc, ctx, true);
  if (id === "global") throw fieldError({ name: "id", description: "The global scope cannot be deleted." });
  stored();
  await svc.state.store.transact([lockKeys.scope(id), lockKeys.admins], () => {
    const cur = svc.state.scope(id);
    if (!cur) throw notFound();
    const now = nowIso();
    const plan = emptyPlan();
    for (const m of svc.state.list<MethodDoc>(collections.methods)) {
      if (m.doc.scope_id === id) deleteMethod(svc.state, m.id, m.doc, m.version, caller, plan, now);
    }
    assertAdminsRemain(svc.state, plan);
    plan.writes.push({ collection: collections.scopes, id, doc: null });
    plan.writes.push(svc.state.tombstone(id, "scope", "global", now));
    return { writes: plan.writes, events: plan.events };
  });
  return json({});
}
