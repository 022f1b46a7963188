// Accounts and users as records: creation of an account with its user (one user per account,
// docs/auth-methods.md#managing-auth-methods),
// and their JSON renderings.

import { prefixedId } from "../../lib/ids.ts";
import type { DocWrite, StoredDoc } from "../../lib/store/mod.ts";
import { accountPrefix, collections, type MethodType, nowIso, omitZero } from "./common.ts";
import type { AccountDoc, ActorCaller, AuthState, UserDoc } from "./state.ts";
import { renderScopeRef } from "./tokens.ts";

export interface NewAccount {
  methodId: string;
  scopeId: string;
  type: MethodType;
  key: string;
  attributes: Record<string, unknown>;
  passwordHash?: string;
  /** OIDC: the managed groups whose filter matched at this first login. */
  managedGroupIds?: string[];
  name?: string;
  description?: string;
  admin?: boolean;
}

/** Writes creating an account and its user; ids are returned so the caller can render them. */
export function accountWithUser(a: NewAccount): { accountId: string; userId: string; writes: DocWrite[] } {
  const accountId = prefixedId(accountPrefix[a.type]);
  const userId = prefixedId("u");
  const now = nowIso();
  const account: AccountDoc = {
    auth_method_id: a.methodId,
    scope_id: a.scopeId,
    type: a.type,
    ...(a.name ? { name: a.name } : {}),
    ...(a.description ? { description: a.description } : {}),
    attributes: a.attributes,
    key: a.key,
    ...(a.passwordHash ? { password_hash: a.passwordHash } : {}),
    ...(a.managedGroupIds?.length ? { managed_group_ids: a.managedGroupIds } : {}),
    user_id: userId,
    created_time: now,
    updated_time: now,
  };
  const user: UserDoc = {
    scope_id: a.scopeId,
    account_ids: [accountId],
    primary_account_id: accountId,
    ...userProfile(a.attributes),
    ...(a.admin ? { admin: true } : {}),
    created_time: now,
    updated_time: now,
  };
  return {
    accountId,
    userId,
    writes: [
      { collection: collections.accounts, id: accountId, doc: account, ifVersion: 0 },
      { collection: collections.users, id: userId, doc: user, ifVersion: 0 },
    ],
  };
}

/** The user's login_name/full_name/email mirror its account's. */
export function userProfile(attrs: Record<string, unknown>): Partial<UserDoc> {
  const out: Partial<UserDoc> = {};
  for (const k of ["login_name", "full_name", "email"] as const) {
    if (typeof attrs[k] === "string" && attrs[k]) out[k] = attrs[k] as string;
  }
  return out;
}

export function isAdmin(c: ActorCaller): boolean {
  return c.kind === "user" && c.admin;
}

export function renderAccount(
  state: AuthState,
  s: StoredDoc<AccountDoc>,
  caller: ActorCaller,
): Record<string, unknown> {
  const d = s.doc;
  const admin = isAdmin(caller);
  const actions = admin
    ? [
      "no-op",
      "read",
      "update",
      "delete",
      ...(d.type === "password" ? ["set-password", "change-password"] : []),
    ]
    : ["read", ...(d.type === "password" ? ["change-password"] : [])];
  return omitZero({
    ...methodChildFields(state, s),
    attributes: omitZero(d.attributes),
    authorized_actions: actions,
  });
}

/** The fields every resource under an auth method (account, managed group) renders first, in Boundary's order. */
export function methodChildFields(
  state: AuthState,
  s: StoredDoc<
    {
      scope_id: string;
      name?: string;
      description?: string;
      created_time: string;
      updated_time: string;
      type: string;
      auth_method_id: string;
    }
  >,
): Record<string, unknown> {
  const d = s.doc;
  return {
    id: s.id,
    scope: renderScopeRef(d.scope_id, state.scope(d.scope_id)?.doc),
    name: d.name,
    description: d.description,
    created_time: d.created_time,
    updated_time: d.updated_time,
    version: s.version,
    type: d.type,
    auth_method_id: d.auth_method_id,
  };
}

export function renderUser(
  state: AuthState,
  s: StoredDoc<UserDoc>,
  caller: ActorCaller,
): Record<string, unknown> {
  const d = s.doc;
  return omitZero({
    id: s.id,
    scope_id: d.scope_id,
    scope: renderScopeRef(d.scope_id, state.scope(d.scope_id)?.doc),
    name: d.name,
    description: d.description,
    created_time: d.created_time,
    updated_time: d.updated_time,
    version: s.version,
    account_ids: d.account_ids,
    primary_account_id: d.primary_account_id,
    login_name: d.login_name,
    full_name: d.full_name,
    email: d.email,
    admin: d.admin,
    authorized_actions: isAdmin(caller) ? ["no-op", "read", "update"] : ["read"],
  });
}
