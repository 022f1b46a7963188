// Group bindings with the names people recognise (docs/web.md#directory-groups): each bound managed group's
// name and its auth method's name, and the managed groups a binding form may offer, read through lib/identity.ts.

import type { IdentityMethod, ManagedGroupInfo } from "../../../lib/identity.ts";
import type { GroupBinding } from "../core/group_bindings.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { getAdminGroups, listOrgBindings } from "./group_bindings.ts";
import { getIdentity } from "./identities.ts";

/** The managed groups a binding form offers at most (sorted by id). */
export const MAX_GROUP_CHOICES = 500;

/** A managed group named for a page: its name (or id) and its auth method's name (or id). */
export interface NamedGroup {
  id: string;
  name: string;
  methodName: string;
  /** The auth method's id (none when the group is gone). */
  methodId?: string;
  /** `name` / `methodName` stand in for a missing name with an id (only for those who may see ids). */
  unnamed: { group: boolean; method: boolean };
}

export function namedGroup(reg: Registry, id: string): NamedGroup {
  const group = reg.identity?.managedGroup(id);
  if (!group) return { id, name: id, methodName: "unknown", unnamed: { group: true, method: false } };
  return namedFrom(group, reg.identity?.method(group.authMethodId));
}

/** A managed group read already, named with its auth method (when that exists). */
function namedFrom(group: ManagedGroupInfo, method: IdentityMethod | undefined): NamedGroup {
  return {
    id: group.id,
    name: group.name || group.id,
    methodName: method?.name || group.authMethodId,
    methodId: group.authMethodId,
    unnamed: { group: !group.name, method: !method?.name },
  };
}

/** The organization's bindings with names (org owners and admins, as the API's GET). */
export function namedOrgBindings(who: Actor, orgName: string): (GroupBinding & { group: NamedGroup })[] {
  return listOrgBindings(who, orgName).map((b) => ({ ...b, group: namedGroup(who.reg, b.managed_group_id) }));
}

/** The administrator groups with names (admins). */
export function namedAdminGroups(who: Actor): NamedGroup[] {
  return getAdminGroups(who).admin_groups.map((id) => namedGroup(who.reg, id));
}

/** The managed groups there are (at most MAX_GROUP_CHOICES), named: each group and each auth method read once. */
export function groupChoices(reg: Registry): NamedGroup[] {
  const methods = new Map<string, IdentityMethod | undefined>();
  const methodOf = (id: string) => {
    if (!methods.has(id)) methods.set(id, reg.identity?.method(id));
    return methods.get(id);
  };
  return (reg.identity?.managedGroups(MAX_GROUP_CHOICES) ?? []).map((g) =>
    namedFrom(g, methodOf(g.authMethodId))
  );
}

/** A registry user's person (admins): the link and the auth methods the person's accounts belong to, named. */
export function namedIdentity(
  who: Actor,
  username: string,
): { userId: string | undefined; accountMethods: string[] } {
  const link = getIdentity(who, username);
  const userId = link.identity?.user_id;
  const person = userId ? who.reg.identity?.user(userId) : undefined;
  const accountMethods = (person?.accountMethodIds ?? []).map((id) => {
    const method = who.reg.identity?.method(id);
    return method?.name ? `${method.name} (${method.type})` : id;
  });
  return { userId, accountMethods };
}
