// Who is acting on the registry (a token's user, a service principal's organization, the web console's
// signed-in user, or nobody) and the permission rules over that caller.

import { ApiError } from "../../../lib/errors.ts";
import { notFound } from "./errors.ts";
import { adminGroups, boundRole, groupsOfUser } from "./group_bindings.ts";
import type { OrgDoc, UserDoc } from "./model.ts";
import type { RegistryState } from "./state.ts";

export const TOKEN_HMAC_PURPOSE = "registry.token";

export interface Caller {
  /** A token was presented (valid or not). */
  tokenPresent: boolean;
  tokenHash: string | undefined;
  user: UserDoc | undefined;
  /** Lowercase username of the caller. */
  userKey: string | undefined;
  /** The managed groups of the user's linked person at this request (docs/identity.md#group-bindings). */
  groups?: readonly string[];
}

/** The caller without a token (shared: callers are never mutated). */
export const ANONYMOUS: Caller = Object.freeze({
  tokenPresent: false,
  tokenHash: undefined,
  user: undefined,
  userKey: undefined,
});

/** A signed-in user acting without a token (the web console's session). */
export function signedIn(user: UserDoc): Caller {
  return { tokenPresent: true, tokenHash: undefined, user, userKey: user.username.toLowerCase() };
}

/**
 * The caller a user's token or session makes, with the roles their managed groups bind at this moment: a
 * member of an admin group acts as an administrator; org roles from bindings are read by `orgRole`.
 */
/** Whether the user is an administrator, stored or through an admin group (docs/identity.md#group-bindings). */
export function actsAsAdmin(reg: RegistryState, user: UserDoc): boolean {
  if (user.admin) return true;
  const groups = groupsOfUser(reg, user);
  return groups.length > 0 && adminGroups(reg).some((g) => groups.includes(g));
}

export function userCaller(reg: RegistryState, user: UserDoc, tokenHash: string | undefined): Caller {
  const userKey = user.username.toLowerCase();
  const groups = groupsOfUser(reg, user);
  if (!groups.length) return { tokenPresent: true, tokenHash, user, userKey };
  const admin = user.admin || adminGroups(reg).some((g) => groups.includes(g));
  return {
    tokenPresent: true,
    tokenHash,
    user: admin === user.admin ? user : { ...user, admin },
    userKey,
    groups,
  };
}

/** What a permission rule looks at: the registry and the caller (an API request is one, so is a console page). */
export interface Acting {
  reg: RegistryState;
  caller: Caller;
}

export function tokenHash(reg: RegistryState, token: string): string {
  return reg.ctx.data.keys.hmac(TOKEN_HMAC_PURPOSE, token);
}

/** 401 unless a valid token was presented. */
export function requireUser(who: Acting): UserDoc {
  if (!who.caller.tokenPresent) throw new ApiError(401, "Authentication required!");
  if (!who.caller.user) throw new ApiError(401, "Bad access token!");
  return who.caller.user;
}

export function requireAdmin(who: Acting): UserDoc {
  const user = requireUser(who);
  if (!user.admin) throw new ApiError(403, "Admin privileges required!");
  return user;
}

/** The user's role in the organization: explicit membership, or else the strongest its group bindings give. */
export function orgRole(
  org: OrgDoc,
  userKey: string,
  groups: readonly string[] = [],
): "owner" | "member" | undefined {
  const explicit = org.members.find((m) => m.username.toLowerCase() === userKey)?.role;
  if (explicit === "owner" || !groups.length) return explicit;
  return boundRole(org.group_bindings, groups) ?? explicit;
}

/** The caller is the namespace, a member or owner of it, or an admin: may read private and write. */
export function isInsider(reg: RegistryState, caller: Caller, ownerKey: string): boolean {
  if (!caller.user || !caller.userKey) return false;
  if (caller.user.admin || caller.userKey === ownerKey) return true;
  const org = reg.org(ownerKey)?.doc;
  return org !== undefined && orgRole(org, caller.userKey, caller.groups) !== undefined;
}

/**
 * Write access to namespace `ownerKey`: 401 without a valid token, 404 for a private box the caller
 * cannot see, 403 otherwise when not allowed, 402 while the namespace is delinquent (admins exempt).
 */
export function requireWrite(who: Acting, ownerKey: string, privateBox = false): UserDoc {
  const user = requireUser(who);
  if (!isInsider(who.reg, who.caller, ownerKey)) {
    if (privateBox) throw notFound();
    const name = who.reg.namespaceName(ownerKey) ?? ownerKey;
    throw new ApiError(403, `You are not allowed to modify boxes in namespace '${name}'!`);
  }
  requireSolvent(who, ownerKey);
  return user;
}

export function requireSolvent(who: Acting, ownerKey: string): void {
  if (who.caller.user?.admin) return;
  if (who.reg.namespaceDelinquent(ownerKey)) {
    const name = who.reg.namespaceName(ownerKey) ?? ownerKey;
    throw new ApiError(402, `Namespace '${name}' is delinquent on billing; writes are disabled!`);
  }
}

/** The organization `name` (404 when absent). */
export function existingOrg(reg: RegistryState, name: string) {
  const org = reg.org(name);
  if (!org) throw notFound();
  return org;
}

/** The organization `name`, when the caller is an admin or one of its owners (401, 404, 403 otherwise). */
export function requireOrgManager(who: Acting, name: string, what = "members") {
  const user = requireUser(who);
  const org = existingOrg(who.reg, name);
  if (!user.admin && orgRole(org.doc, user.username.toLowerCase(), who.caller.groups) !== "owner") {
    throw new ApiError(403, `You are not allowed to manage ${what} of '${org.doc.name}'!`);
  }
  return org;
}
