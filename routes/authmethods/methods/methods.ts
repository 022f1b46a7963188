// Handlers for auth-method create, read, delete and list (docs/auth-methods.md#managing-auth-methods).

import { prefixedId } from "../../../lib/ids.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { asAttrs } from "./attrs_common.ts";
import { assertAdminsRemain, deleteMethod, emptyPlan } from "../cascade.ts";
import {
  assertIdFormat,
  collections,
  lockKeys,
  methodPrefix,
  type MethodType,
  methodTypes,
  nowIso,
} from "../common.ts";
import { fieldError, FieldErrors, notFound } from "../errors.ts";
import { applyNameDescription, checkCreateVersion, rejectReadOnly } from "../fields.ts";
import { filterIter } from "../lists/list_route.ts";
import { listResponse, parseFilterParam, runList } from "../lists/listing.ts";
import { applyAttributes, publiclyListed, renderMethod, storeSecrets } from "./methods_model.ts";
import { type AuthService, listEnvironment, readObjectBody } from "../service.ts";
import { type MethodDoc, methodEvent, type ScopeDoc, type TombstoneDoc } from "../state.ts";

export const methodIdPrefixes = Object.values(methodPrefix);
/** Top-level keys a client may never write (create or PATCH). */
export const readOnlyTop = [
  "id",
  "scope",
  "created_time",
  "updated_time",
  "is_primary",
  "authorized_actions",
  "authorized_collection_actions",
];

/** A scope id from input: 400 when malformed, 404 when absent. */
export function resolveScopeId(svc: AuthService, raw: unknown, field = "scope_id"): StoredDoc<ScopeDoc> {
  if (typeof raw !== "string" || (raw !== "global" && !/^o_[A-Za-z0-9]{1,60}$/.test(raw))) {
    throw fieldError({ name: field, description: "This field must be 'global' or a valid org scope id." });
  }
  const scope = svc.state.scope(raw);
  if (!scope) throw notFound();
  return scope;
}

export async function createMethod(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const actor = svc.requireAdmin(ctx);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  rejectReadOnly(body, readOnlyTop, errors);
  checkCreateVersion(body, errors);
  const type = body.type;
  if (typeof type !== "string" || !methodTypes.includes(type as MethodType)) {
    errors.add("type", "This field must be one of: password, oidc, ldap.");
  }
  if (
    typeof body.scope_id !== "string" ||
    (body.scope_id !== "global" && !/^o_[A-Za-z0-9]{1,60}$/.test(body.scope_id))
  ) {
    errors.add("scope_id", "This field must be 'global' or a valid org scope id.");
  }
  const named: { name?: string; description?: string } = {};
  applyNameDescription(body, named, errors);
  const attrsIn = body.attributes === undefined || body.attributes === null
    ? undefined
    : asAttrs(body.attributes);
  if (body.attributes !== undefined && body.attributes !== null && !attrsIn) {
    errors.add("attributes", "Expected an object.");
  } else if (type === "oidc" && !attrsIn) errors.add("attributes", "This field is required.");
  if (!errors.empty) errors.throwIfAny();
  const methodType = type as MethodType;
  const outcome = applyAttributes(methodType, {
    mode: "create",
    base: {},
    baseSecrets: new Set(),
    input: attrsIn ?? {},
    errors,
  });
  errors.throwIfAny();
  const scope = resolveScopeId(svc, body.scope_id);
  const id = prefixedId(methodPrefix[methodType]);
  const locks = [
    lockKeys.method(id),
    lockKeys.scope(scope.id),
    ...(named.name ? [`auth/methodname/${scope.id}`] : []),
  ];
  await svc.state.store.transact(locks, () => {
    if (!svc.state.scope(scope.id)) throw notFound();
    if (named.name && nameTaken(svc, scope.id, named.name, id)) {
      throw fieldError({ name: "name", description: "Name is already in use in this scope." });
    }
    const now = nowIso();
    const doc: MethodDoc = {
      scope_id: scope.id,
      type: methodType,
      ...named,
      attributes: outcome.attributes,
      secrets: {},
      hmacs: {},
      created_time: now,
      updated_time: now,
    };
    storeSecrets(svc.state, id, doc, outcome.secrets);
    return {
      writes: [{ collection: collections.methods, id, doc, ifVersion: 0 }],
      events: [methodEvent("AuthMethodCreated", id, doc, 1, actor, { name: doc.name ?? "" })],
    };
  });
  return json(renderMethod(svc.state, svc.state.method(id)!, true));
}

export function nameTaken(svc: AuthService, scopeId: string, name: string, exceptId: string): boolean {
  const owner = svc.state.methodNamed(scopeId, name);
  return owner !== undefined && owner !== exceptId;
}

/** Checks id syntax, then admin, then existence. */
export function loadMethodForAdmin(svc: AuthService, ctx: RequestContext) {
  const id = ctx.params.id!;
  assertIdFormat(id, methodIdPrefixes);
  const actor = svc.requireAdmin(ctx);
  return {
    id,
    actor,
    stored: () =>
      svc.state.method(id) ?? (() => {
        throw notFound();
      })(),
  };
}

export function readMethod(svc: AuthService, ctx: RequestContext): Response {
  const { stored } = loadMethodForAdmin(svc, ctx);
  return json(renderMethod(svc.state, stored(), true));
}

export async function removeMethod(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, actor, stored } = loadMethodForAdmin(svc, ctx);
  const existing = stored();
  await svc.state.store.transact(
    [lockKeys.method(id), lockKeys.scope(existing.doc.scope_id), lockKeys.admins],
    () => {
      const cur = svc.state.method(id);
      if (!cur) throw notFound();
      const now = nowIso();
      const plan = emptyPlan();
      deleteMethod(svc.state, id, cur.doc, cur.version, actor, plan, now);
      assertAdminsRemain(svc.state, plan);
      const scope = svc.state.scope(cur.doc.scope_id);
      if (scope?.doc.primary_auth_method_id === id) {
        const { primary_auth_method_id: _cleared, ...rest } = scope.doc;
        plan.writes.push({
          collection: collections.scopes,
          id: scope.id,
          doc: { ...rest, updated_time: now },
        });
      }
      return { writes: plan.writes, events: plan.events };
    },
  );
  return json({});
}

/**
 * A list's `scope_id` (required) and `recursive` query parameters: the scope, and the scopes listed (every org
 * too when recursive from global).
 */
export function listedScopes(
  svc: AuthService,
  url: URL,
): { scopeId: string; recursive: boolean; scopes: Set<string> } {
  const scopeParam = url.searchParams.get("scope_id");
  if (!scopeParam) throw fieldError({ name: "scope_id", description: "This field is required." });
  const scope = resolveScopeId(svc, scopeParam);
  const recursiveRaw = url.searchParams.get("recursive");
  if (recursiveRaw !== null && !["true", "false", ""].includes(recursiveRaw.toLowerCase())) {
    throw fieldError({ name: "recursive", description: "Must be true or false." });
  }
  const recursive = recursiveRaw?.toLowerCase() === "true";
  const scopes = new Set([scope.id]);
  if (recursive && scope.id === "global") {
    for (const s of svc.state.list<ScopeDoc>(collections.scopes)) scopes.add(s.id);
  }
  return { scopeId: scope.id, recursive, scopes };
}

export function listMethods(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.caller(ctx);
  const admin = caller.kind === "user" && caller.admin;
  const url = ctx.url;
  const { scopeId, recursive, scopes } = listedScopes(svc, url);
  const filter = parseFilterParam(url);
  const body = runList<MethodDoc>({
    resource: "auth-method",
    candidates: filterIter(svc.state.list<MethodDoc>(collections.methods), (m) => scopes.has(m.doc.scope_id)),
    tombstones: filterIter(
      svc.state.list<TombstoneDoc>(collections.tombstones),
      (t) => t.doc.resource === "auth-method" && scopes.has(t.doc.scope_id),
    ),
    render: (m) => (admin || publiclyListed(m.doc) ? renderMethod(svc.state, m, admin) : undefined),
    caller,
    queryKey: JSON.stringify([scopeId, recursive, url.searchParams.get("filter") ?? ""]),
    ...listEnvironment(svc, url),
    changedSince: {
      appliedIndex: () => svc.state.appliedIndex,
      updated: (after) => filterIter(svc.state.methodsWrittenAfter(after), (m) => scopes.has(m.doc.scope_id)),
      deleted: (after) =>
        filterIter(
          svc.state.tombstonesWrittenAfter(after),
          (t) => t.doc.resource === "auth-method" && scopes.has(t.doc.scope_id),
        ),
    },
    incremental: {
      changesSince: (since) => svc.state.methodChangesSince(since),
      lookup: (id) => svc.state.method(id),
      accepts: (m) => scopes.has(m.doc.scope_id),
    },
  }, filter);
  return listResponse(body);
}
