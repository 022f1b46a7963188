// Group bindings (docs/identity.md#group-bindings): an organization's managed groups bound to its roles (org
// owners and admins), the managed groups bound to the registry's administrators (admins), and the bindings a
// deleted managed group leaves, removed.

import { existingOrg, requireAdmin, requireOrgManager } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { ADMIN_GROUPS_ID, adminGroups, type GroupBinding } from "../core/group_bindings.ts";
import { groupBindingsChanged } from "../core/identity_events.ts";
import { now, type OrgDoc, ORGS, SETTINGS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { refuseAdminLockout } from "./sign_in_methods.ts";

/** Bindings per organization and admin groups at most (each request reads them). */
export const MAX_GROUP_BINDINGS = 64;

export function listOrgBindings(who: Actor, orgName: string): GroupBinding[] {
  const org = requireOrgManager(who, orgName, "group bindings");
  return [...(org.doc.group_bindings ?? [])];
}

function readGroupId(reg: Registry, value: unknown, label: string): string {
  if (value === undefined || value === null || value === "") throw unprocessable([`${label} can't be blank`]);
  if (typeof value !== "string" || value.length > 128) {
    throw unprocessable([`${label} must be a managed group id`]);
  }
  if (!reg.identity?.managedGroup(value)) throw unprocessable([`Managed group '${value}' does not exist`]);
  return value;
}

/** Binds `input.managed_group_id` to `input.role` in the organization (a bound group's role is replaced). */
export async function bindOrgGroup(
  who: Actor,
  orgName: string,
  input: { managed_group_id?: unknown; role?: unknown },
): Promise<GroupBinding[]> {
  const managed = requireOrgManager(who, orgName, "group bindings");
  const reg = who.reg;
  const groupId = readGroupId(reg, input.managed_group_id, "Managed group id");
  if (input.role !== "owner" && input.role !== "member") {
    throw unprocessable(["Role must be owner or member"]);
  }
  const role: GroupBinding["role"] = input.role;
  return await reg.write(() => {
    const org = existingOrg(reg, managed.doc.name);
    const others = (org.doc.group_bindings ?? []).filter((b) => b.managed_group_id !== groupId);
    if (others.length >= MAX_GROUP_BINDINGS) {
      throw unprocessable([`An organization can bind at most ${MAX_GROUP_BINDINGS} managed groups`]);
    }
    const bindings: GroupBinding[] = [...others, { managed_group_id: groupId, role }];
    return orgWrite(org, bindings, who);
  });
}

export async function unbindOrgGroup(who: Actor, orgName: string, groupId: string): Promise<GroupBinding[]> {
  const managed = requireOrgManager(who, orgName, "group bindings");
  const reg = who.reg;
  return await reg.write(() => {
    const org = existingOrg(reg, managed.doc.name);
    const bindings = org.doc.group_bindings ?? [];
    if (!bindings.some((b) => b.managed_group_id === groupId)) throw notFound();
    return orgWrite(org, bindings.filter((b) => b.managed_group_id !== groupId), who);
  });
}

function orgWrite(org: { id: string; version: number; doc: OrgDoc }, bindings: GroupBinding[], who: Actor) {
  const doc: OrgDoc = { ...org.doc, group_bindings: bindings, updated_at: now() };
  return {
    writes: [{ collection: ORGS, id: org.id, doc, ifVersion: org.version }],
    events: [groupBindingsChanged({ organization: doc.name }, bindings, who.caller.user?.username ?? "")],
    result: bindings,
  };
}

export function getAdminGroups(who: Actor): { admin_groups: string[] } {
  requireAdmin(who);
  return { admin_groups: [...adminGroups(who.reg)] };
}

/** Replaces the managed groups whose members are registry administrators (`input.admin_groups`, a list). */
export async function putAdminGroups(
  who: Actor,
  input: { admin_groups?: unknown },
): Promise<{ admin_groups: string[] }> {
  const actor = requireAdmin(who);
  const reg = who.reg;
  const value = input.admin_groups;
  if (!Array.isArray(value)) throw unprocessable(["Admin groups must be a list of managed group ids"]);
  if (value.length > MAX_GROUP_BINDINGS) {
    throw unprocessable([`Admin groups can name at most ${MAX_GROUP_BINDINGS} managed groups`]);
  }
  const groups = value.map((v) => readGroupId(reg, v, "Admin group"));
  if (new Set(groups).size !== groups.length) throw unprocessable(["Admin groups must not repeat"]);
  await reg.write(() => {
    refuseAdminLockout(reg, { adminGroups: groups }, "These admin groups");
    return {
      writes: [{ collection: SETTINGS, id: ADMIN_GROUPS_ID, doc: { admin_groups: groups } }],
      events: [groupBindingsChanged({ admin_groups: groups }, undefined, actor.username)],
    };
  });
  return { admin_groups: [...adminGroups(reg)] };
}

/** Removes every binding of the deleted managed group `groupId` (idempotent: each node may run it). */
export async function removeGroupBindings(reg: Registry, groupId: string): Promise<void> {
  await reg.write(() => {
    const writes = [];
    const events = [];
    for (const org of reg.store.list<OrgDoc>(ORGS)) {
      const bindings = org.doc.group_bindings ?? [];
      if (!bindings.some((b) => b.managed_group_id === groupId)) continue;
      const left = bindings.filter((b) => b.managed_group_id !== groupId);
      writes.push({
        collection: ORGS,
        id: org.id,
        doc: { ...org.doc, group_bindings: left },
        ifVersion: org.version,
      });
      events.push(groupBindingsChanged({ organization: org.doc.name }, left, "managed-group-deleted"));
    }
    const admins = adminGroups(reg);
    if (admins.includes(groupId)) {
      const left = admins.filter((g) => g !== groupId);
      writes.push({ collection: SETTINGS, id: ADMIN_GROUPS_ID, doc: { admin_groups: left } });
      events.push(groupBindingsChanged({ admin_groups: left }, undefined, "managed-group-deleted"));
    }
    return { writes, events };
  });
}
