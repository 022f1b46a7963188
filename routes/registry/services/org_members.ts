// An organization's members as they hold their roles (docs/identity.md#who-is-a-member): direct members and
// the registry users a bound managed group grants a role, each with how they got it, one page at a time.

import { orgRole, requireUser } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { type BoundRole, groupsOfUser } from "../core/group_bindings.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import type { OrgDoc, UserDoc } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { type NamedGroup, namedGroup } from "./group_binding_names.ts";
import { positiveInt } from "./search.ts";

/** Members per page at most (and by default). */
export const MAX_MEMBERS_PER_PAGE = 100;

/** How a member holds a role: stored in the organization, or through a bound managed group. */
export type MemberSource =
  | { type: "direct"; role: BoundRole }
  | {
    type: "group";
    role: BoundRole;
    group_name: string;
    auth_method_name: string;
    /** The ids, for those who manage the organization (members cannot read its bindings). */
    managed_group_id?: string;
    auth_method_id?: string;
  };

/** A member with the role the permission rules give them (`orgRole`) and every source of it. */
export interface EffectiveMember {
  username: string;
  role: BoundRole;
  sources: MemberSource[];
}

export interface MemberPage {
  members: EffectiveMember[];
  page: number;
  limit: number;
  /** Direct members, and registry users linked to a person in a bound group's member_ids. */
  total: number;
}

/** A page as asked (the query string's `page` and `limit`, unchecked). */
export interface MemberPageInput {
  page: string | null;
  limit: string | null;
}

/**
 * Everyone who may hold a role in the organization, by username key: its direct members, and the registry users
 * linked to the people of its bound groups (the linked-users index; each group costs its own members).
 */
function candidates(reg: Registry, org: OrgDoc): Map<string, StoredDoc<UserDoc> | undefined> {
  const found = new Map<string, StoredDoc<UserDoc> | undefined>();
  for (const m of org.members) {
    const key = m.username.toLowerCase();
    found.set(key, reg.user(key));
  }
  if (!reg.identity) return found;
  for (const binding of org.group_bindings ?? []) {
    for (const person of reg.identity.managedGroupMembers(binding.managed_group_id)) {
      const user = reg.linkedUsers.of(person);
      if (user && !found.has(user.id)) found.set(user.id, user);
    }
  }
  return found;
}

/** The member `key`'s effective role and its sources, or undefined when nothing grants one now. */
function memberOf(
  reg: Registry,
  org: OrgDoc,
  key: string,
  user: StoredDoc<UserDoc> | undefined,
  withIds: boolean,
  named: Map<string, NamedGroup>,
): EffectiveMember | undefined {
  const groups = user ? groupsOfUser(reg, user.doc) : [];
  const role = orgRole(org, key, groups);
  if (!role) return undefined;
  const sources: MemberSource[] = [];
  const direct = org.members.find((m) => m.username.toLowerCase() === key);
  if (direct) sources.push({ type: "direct", role: direct.role });
  for (const b of org.group_bindings ?? []) {
    if (!groups.includes(b.managed_group_id)) continue;
    const group = named.get(b.managed_group_id)!;
    sources.push({
      type: "group",
      role: b.role,
      // A missing name stands in as an id only for those who may see ids (the bindings API refuses the others).
      group_name: withIds || !group.unnamed.group ? group.name : "unnamed group",
      auth_method_name: withIds || !group.unnamed.method ? group.methodName : "unnamed auth method",
      ...(withIds ? { managed_group_id: b.managed_group_id, auth_method_id: group.methodId } : {}),
    });
  }
  return { username: user?.doc.username ?? direct?.username ?? key, role, sources };
}

/**
 * One page of the organization's members, by username: admins and anyone holding a role in it (directly or
 * through a group) may read it; 404 for others, as the organization's page.
 */
export function listOrgMembers(who: Actor, orgName: string, input: MemberPageInput): MemberPage {
  const user = requireUser(who);
  const org = who.reg.org(orgName);
  const callerRole = org && who.caller.userKey
    ? orgRole(org.doc, who.caller.userKey, who.caller.groups)
    : undefined;
  if (!org || (!user.admin && !callerRole)) throw notFound();
  const errors: string[] = [];
  const limit = Math.min(
    MAX_MEMBERS_PER_PAGE,
    positiveInt(input.limit, MAX_MEMBERS_PER_PAGE, "Limit", errors),
  );
  const page = positiveInt(input.page, 1, "Page", errors);
  if (errors.length) throw unprocessable(errors);
  const found = candidates(who.reg, org.doc);
  const keys = [...found.keys()].sort();
  const withIds = user.admin || callerRole === "owner";
  // Each bound group named once for the page, not once per row.
  const named = new Map(
    (org.doc.group_bindings ?? []).map((b) => [b.managed_group_id, namedGroup(who.reg, b.managed_group_id)]),
  );
  const members: EffectiveMember[] = [];
  for (const key of keys.slice((page - 1) * limit, page * limit)) {
    const member = memberOf(who.reg, org.doc, key, found.get(key), withIds, named);
    if (member) members.push(member);
  }
  return { members, page, limit, total: keys.length };
}
