// Managed groups and who is in them (docs/auth-methods.md#managed-groups): the group document, and an index
// kept from the stored accounts and groups. An LDAP account is a member of an ldap group of its method when one
// of the directory groups its last login found (`member_of_groups`) is among the group's `group_names`; an OIDC
// account is a member of the oidc groups whose filter matched at its last login (`managed_group_ids`).

import type { EventInput } from "../../lib/store/mod.ts";
import { type ManagedGroupType, resourceEvent } from "./common.ts";

export interface ManagedGroupDoc {
  [k: string]: unknown;
  auth_method_id: string;
  scope_id: string;
  type: ManagedGroupType;
  name?: string;
  description?: string;
  /** ldap: `group_names` (non-empty); oidc: `filter` (a go-bexpr expression over /token and /userinfo). */
  attributes: { group_names?: string[]; filter?: string };
  created_time: string;
  updated_time: string;
}

/** What the index reads of an account document (state.ts AccountDoc). */
interface AccountFacts {
  auth_method_id: string;
  type: string;
  attributes: Record<string, unknown>;
  /** OIDC accounts: the oidc groups whose filter matched at the account's last login. */
  managed_group_ids?: string[];
}

const nameKey = (methodId: string, groupName: string) => `${methodId}\u0000${groupName}`;

function directoryGroups(a: AccountFacts): string[] {
  const g = a.attributes.member_of_groups;
  return a.type === "ldap" && Array.isArray(g) ? g.filter((x): x is string => typeof x === "string") : [];
}

function storedGroupIds(a: AccountFacts): string[] {
  return a.type === "oidc" && Array.isArray(a.managed_group_ids) ? a.managed_group_ids : [];
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, set = new Set());
  set.add(value);
}

function removeFrom(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

/** Memberships in both directions, updated by AuthState as accounts and groups are committed. */
export class MembershipIndex {
  /** method id → its managed groups' ids. */
  #groupsByMethod = new Map<string, Set<string>>();
  /** method id + directory group name → LDAP accounts of that method whose last login found the group. */
  #ldapMembers = new Map<string, Set<string>>();
  /** oidc managed group id → OIDC accounts that matched it at their last login. */
  #oidcMembers = new Map<string, Set<string>>();
  readonly #group: (id: string) => ManagedGroupDoc | undefined;

  constructor(group: (id: string) => ManagedGroupDoc | undefined) {
    this.#group = group;
  }

  accountChanged(id: string, previous: AccountFacts | undefined, current: AccountFacts | undefined): void {
    if (previous) {
      for (const g of directoryGroups(previous)) {
        removeFrom(this.#ldapMembers, nameKey(previous.auth_method_id, g), id);
      }
      for (const g of storedGroupIds(previous)) removeFrom(this.#oidcMembers, g, id);
    }
    if (current) {
      for (const g of directoryGroups(current)) {
        addTo(this.#ldapMembers, nameKey(current.auth_method_id, g), id);
      }
      for (const g of storedGroupIds(current)) addTo(this.#oidcMembers, g, id);
    }
  }

  groupChanged(
    id: string,
    previous: ManagedGroupDoc | undefined,
    current: ManagedGroupDoc | undefined,
  ): void {
    if (previous) removeFrom(this.#groupsByMethod, previous.auth_method_id, id);
    if (current) addTo(this.#groupsByMethod, current.auth_method_id, id);
  }

  /** Ids of the managed groups of `methodId`. */
  groupIdsOfMethod(methodId: string): string[] {
    return [...this.#groupsByMethod.get(methodId) ?? []];
  }

  /** The account ids that are members of group `id`, sorted. */
  memberIds(id: string, group: ManagedGroupDoc): string[] {
    const out = new Set<string>();
    if (group.type === "ldap") {
      for (const name of group.attributes.group_names ?? []) {
        for (const a of this.#ldapMembers.get(nameKey(group.auth_method_id, name)) ?? []) out.add(a);
      }
    } else {
      for (const a of this.#oidcMembers.get(id) ?? []) out.add(a);
    }
    return [...out].sort();
  }

  /** The ids of the managed groups `account` is a member of, sorted (groups deleted since are left out). */
  groupIdsOfAccount(account: AccountFacts): string[] {
    const out = new Set<string>();
    if (account.type === "oidc") {
      for (const g of storedGroupIds(account)) {
        if (this.#group(g)?.auth_method_id === account.auth_method_id) out.add(g);
      }
    } else if (account.type === "ldap") {
      const names = new Set(directoryGroups(account));
      for (const g of this.#groupsByMethod.get(account.auth_method_id) ?? []) {
        if (this.#group(g)?.attributes.group_names?.some((n) => names.has(n))) out.add(g);
      }
    }
    return [...out].sort();
  }
}

/** A managed group's change on the event stream (topic ManagedGroup); never carries member ids or claims. */
export function managedGroupEvent(
  type: "ManagedGroupCreated" | "ManagedGroupUpdated" | "ManagedGroupDeleted",
  id: string,
  doc: ManagedGroupDoc,
  version: number,
  actor: { kind: string; userId?: string },
  extra: Record<string, unknown> = {},
): EventInput {
  const fields = { id, auth_method_id: doc.auth_method_id, scope_id: doc.scope_id, type: doc.type, version };
  return resourceEvent("ManagedGroup", type, fields, actor, extra);
}
