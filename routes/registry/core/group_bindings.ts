// Roles from managed groups (docs/identity.md#group-bindings): an organization binds managed groups to its
// roles, the registry binds some to its administrators; a user's groups are those of the auth-method user they
// are linked to, as each account's most recent login decided. Read on every request.

import { SETTINGS, type UserDoc } from "./model.ts";
import type { RegistryState } from "./state.ts";

export type BoundRole = "owner" | "member";

export interface GroupBinding {
  managed_group_id: string;
  role: BoundRole;
}

/** The settings document of the groups whose members are registry administrators. */
export const ADMIN_GROUPS_ID = "admin_groups";

/** The managed groups bound to the registry's administrators. */
export function adminGroups(reg: RegistryState): readonly string[] {
  const stored = reg.store.get<{ admin_groups: string[] }>(SETTINGS, ADMIN_GROUPS_ID)?.doc.admin_groups;
  return Array.isArray(stored) ? stored : [];
}

/** The managed groups of the user's linked person (none when unlinked or without the auth methods). */
export function groupsOfUser(reg: RegistryState, user: UserDoc): readonly string[] {
  const person = user.identity?.user_id;
  return person && reg.identity ? reg.identity.managedGroupsOf(person) : [];
}

/** The strongest role `bindings` give a member of `groups`. */
export function boundRole(
  bindings: readonly GroupBinding[] | undefined,
  groups: readonly string[],
): BoundRole | undefined {
  if (!bindings?.length || !groups.length) return undefined;
  let role: BoundRole | undefined;
  for (const b of bindings) {
    if (!groups.includes(b.managed_group_id)) continue;
    if (b.role === "owner") return "owner";
    role = "member";
  }
  return role;
}
