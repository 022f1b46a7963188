// /v1/managed-groups (docs/auth-methods.md#managed-groups): create, read, update, delete and list of the ldap
// and oidc managed groups of an auth method, by admins.

import { prefixedId } from "../../../lib/ids.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import {
  assertIdFormat,
  collections,
  lockKeys,
  managedGroupPrefix,
  type ManagedGroupType,
  methodPrefix,
  nowIso,
} from "../common.ts";
import { fieldError, FieldErrors, notFound, versioned, versionMismatch } from "../errors.ts";
import {
  applyNameDescription,
  checkChildPatchKeys,
  checkCreateKeys,
  fieldMask,
  requireVersion,
} from "../fields.ts";
import { respondWithChildList } from "../lists/list_route.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import type { ManagedGroupDoc, MethodDoc } from "../state.ts";
import { managedGroupEvent } from "../memberships.ts";
import {
  attributesObject,
  maxGroupsPerMethod,
  readGroupAttributes,
  renderManagedGroup,
} from "./managed_groups_model.ts";

const groupPrefixes = Object.values(managedGroupPrefix);
const readOnly = ["id", "scope", "created_time", "updated_time", "member_ids", "authorized_actions"];
/** Keys a PATCH may carry (type and auth_method_id only unchanged). */
const patchKeys = ["name", "description", "version", "type", "auth_method_id", "attributes"];
const nameLock = (methodId: string) => `auth/managed-group-names/${methodId}`;

/** The auth method named by `raw` (400 for a malformed id or a password method, 404 when absent). */
function groupMethod(svc: AuthService, raw: unknown): { id: string; doc: MethodDoc; type: ManagedGroupType } {
  if (typeof raw !== "string" || raw === "") {
    throw fieldError({ name: "auth_method_id", description: "This field is required." });
  }
  assertIdFormat(raw, Object.values(methodPrefix), "auth_method_id");
  if (raw.startsWith(`${methodPrefix.password}_`)) {
    throw fieldError({
      name: "auth_method_id",
      description: "Managed groups exist only in oidc and ldap auth methods.",
    });
  }
  const method = svc.state.method(raw);
  if (!method) throw notFound();
  return { id: raw, doc: method.doc, type: method.doc.type as ManagedGroupType };
}

function nameTaken(svc: AuthService, methodId: string, name: string, exceptId: string): boolean {
  return svc.state.memberships.groupIdsOfMethod(methodId).some((id) =>
    id !== exceptId && svc.state.managedGroup(id)?.doc.name === name
  );
}

const nameInUse = () =>
  fieldError({ name: "name", description: "Name is already in use in this auth method." });

export async function createManagedGroup(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const actor = svc.requireAdmin(ctx);
  const body = await readObjectBody(ctx);
  const method = groupMethod(svc, body.auth_method_id);
  const errors = new FieldErrors();
  checkCreateKeys(body, readOnly, errors);
  for (const k of Object.keys(body)) {
    if (
      !["auth_method_id", "type", "name", "description", "attributes", "version", ...readOnly].includes(k)
    ) {
      errors.add(k, "Unknown field.");
    }
  }
  if (body.type !== undefined && body.type !== null && body.type !== method.type) {
    errors.add("type", "Doesn't match the parent resource's type.");
  }
  const named: { name?: string; description?: string } = {};
  applyNameDescription(body, named, errors);
  const attrsIn = attributesObject(body, errors);
  const attributes: ManagedGroupDoc["attributes"] = {};
  readGroupAttributes(method.type, attrsIn, attributes, errors, "create");
  const required = method.type === "ldap" ? "group_names" : "filter";
  if (!errors.has("attributes") && !(required in attrsIn)) {
    errors.add(`attributes.${required}`, "This field is required.");
  }
  errors.throwIfAny();
  const id = prefixedId(managedGroupPrefix[method.type]);
  await svc.state.store.transact([nameLock(method.id)], () => {
    if (!svc.state.method(method.id)) throw notFound();
    if (named.name && nameTaken(svc, method.id, named.name, id)) throw nameInUse();
    if (svc.state.memberships.groupIdsOfMethod(method.id).length >= maxGroupsPerMethod) {
      throw fieldError({
        name: "auth_method_id",
        description: `An auth method has at most ${maxGroupsPerMethod} managed groups.`,
      });
    }
    const now = nowIso();
    const doc: ManagedGroupDoc = {
      auth_method_id: method.id,
      scope_id: method.doc.scope_id,
      type: method.type,
      ...named,
      attributes,
      created_time: now,
      updated_time: now,
    };
    return {
      writes: [{ collection: collections.managedGroups, id, doc, ifVersion: 0 }],
      events: [managedGroupEvent("ManagedGroupCreated", id, doc, 1, actor, { name: doc.name ?? "" })],
    };
  }, { sharedLocks: [lockKeys.method(method.id), lockKeys.scope(method.doc.scope_id)] });
  return json(renderManagedGroup(svc.state, svc.state.managedGroup(id)!));
}

/** Id syntax (400), then admin (401/403), then existence (404). */
function loadGroup(svc: AuthService, ctx: RequestContext) {
  const id = ctx.params.id!;
  assertIdFormat(id, groupPrefixes);
  const actor = svc.requireAdmin(ctx);
  const stored = svc.state.managedGroup(id);
  if (!stored) throw notFound();
  return { id, actor, stored };
}

export function readManagedGroup(svc: AuthService, ctx: RequestContext): Response {
  const { stored } = loadGroup(svc, ctx);
  return json(renderManagedGroup(svc.state, stored));
}

export async function updateManagedGroup(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, actor, stored } = loadGroup(svc, ctx);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  checkChildPatchKeys(body, patchKeys, readOnly, stored.doc, errors);
  const attrsIn = attributesObject(body, errors);
  errors.throwIfAny();
  const version = requireVersion(body);
  const attrField = `attributes.${stored.doc.type === "ldap" ? "group_names" : "filter"}`;
  const valid = ["name", "description", attrField];
  const mask = fieldMask(ctx.url, { ...body, attributes: attrsIn }, (p) => valid.includes(p));
  for (const p of mask) if (!valid.includes(p)) errors.add(p, "Unknown field.");
  errors.throwIfAny();
  const next: ManagedGroupDoc = { ...stored.doc, attributes: { ...stored.doc.attributes } };
  const values: Record<string, unknown> = {};
  for (const k of mask) values[k] = k in body ? body[k] : null;
  applyNameDescription(values, next, errors, new Set(mask));
  if (mask.includes(attrField)) {
    const key = attrField.slice("attributes.".length);
    readGroupAttributes(stored.doc.type, { [key]: attrsIn[key] ?? null }, next.attributes, errors, "update");
  }
  errors.throwIfAny();
  if (stored.version !== version) throw versionMismatch(version, stored.version);
  await versioned(
    svc.state.store.transact([`${collections.managedGroups}/${id}`, nameLock(next.auth_method_id)], () => {
      const cur = svc.state.managedGroup(id);
      if (!cur) throw notFound();
      if (cur.version !== version) throw versionMismatch(version, cur.version);
      if (next.name && nameTaken(svc, next.auth_method_id, next.name, id)) throw nameInUse();
      const doc = { ...next, updated_time: nowIso() };
      return {
        writes: [{ collection: collections.managedGroups, id, doc, ifVersion: version }],
        events: [
          managedGroupEvent("ManagedGroupUpdated", id, doc, version + 1, actor, {
            changed_fields: [...mask].sort(),
          }),
        ],
      };
    }),
  );
  return json(renderManagedGroup(svc.state, svc.state.managedGroup(id)!));
}

export async function removeManagedGroup(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, actor, stored } = loadGroup(svc, ctx);
  await svc.state.store.transact([`${collections.managedGroups}/${id}`], () => {
    const cur = svc.state.managedGroup(id);
    if (!cur) throw notFound();
    const now = nowIso();
    return {
      writes: [
        { collection: collections.managedGroups, id, doc: null },
        svc.state.tombstone(id, "managed-group", cur.doc.scope_id, now, cur.doc.auth_method_id),
      ],
      events: [managedGroupEvent("ManagedGroupDeleted", id, cur.doc, cur.version, actor)],
    };
  }, { sharedLocks: [lockKeys.method(stored.doc.auth_method_id), lockKeys.scope(stored.doc.scope_id)] });
  return json({});
}

export function listManagedGroups(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.requireAdmin(ctx);
  const raw = ctx.url.searchParams.get("auth_method_id");
  const method = groupMethod(svc, raw ?? "");
  return respondWithChildList<ManagedGroupDoc>(svc, ctx, {
    resource: "managed-group",
    collection: collections.managedGroups,
    caller,
    belongs: (group) => group.auth_method_id === method.id,
    tombstoneBelongs: (tombstone) => tombstone.parent_id === method.id,
    render: (g: StoredDoc<ManagedGroupDoc>) => renderManagedGroup(svc.state, g),
    queryParts: [method.id],
  });
}
