// The accounts of external identities (LDAP entries, OIDC subjects): the identity locks a login takes, and
// the account and user a login creates or refreshes.

import type { DocWrite, StoredDoc } from "../../../lib/store/mod.ts";
import { collections, nowIso } from "../common.ts";
import { accountWithUser, userProfile } from "../principals.ts";
import type { AuthService } from "../service.ts";
import type { AccountDoc, MethodDoc, UserDoc } from "../state.ts";

/**
 * Finds the account of an external identity or creates it with its user; refreshes the profile. With no
 * account under `key`, the one `adopt` finds (keyed the way of an older release) becomes the identity's.
 * `managedGroupIds` (OIDC) replaces the account's oidc managed-group memberships.
 */
export function upsertExternalAccount(
  svc: AuthService,
  req: { id: string; method: MethodDoc },
  key: string,
  attributes: Record<string, unknown>,
  adopt?: () => StoredDoc<AccountDoc> | undefined,
  managedGroupIds?: string[],
): { userId: string; accountId: string; writes: DocWrite[] } {
  const existing = svc.state.accountByKey(req.id, key) ?? adopt?.();
  if (!existing) {
    const created = accountWithUser({
      methodId: req.id,
      scopeId: req.method.scope_id,
      type: req.method.type,
      key,
      attributes,
      ...(managedGroupIds ? { managedGroupIds } : {}),
    });
    return { userId: created.userId, accountId: created.accountId, writes: created.writes };
  }
  const writes: DocWrite[] = [];
  const groupsChanged = managedGroupIds !== undefined &&
    (existing.doc.managed_group_ids ?? []).join("\u0000") !== managedGroupIds.join("\u0000");
  if (existing.doc.key !== key || !sameProfile(existing.doc.attributes, attributes) || groupsChanged) {
    const now = nowIso();
    const { managed_group_ids: _old, ...rest } = existing.doc;
    const groups = managedGroupIds ?? existing.doc.managed_group_ids ?? [];
    writes.push({
      collection: collections.accounts,
      id: existing.id,
      doc: {
        ...rest,
        key,
        attributes,
        ...(groups.length ? { managed_group_ids: groups } : {}),
        updated_time: now,
      },
      ifVersion: existing.version,
    });
    const user = svc.state.get<UserDoc>(collections.users, existing.doc.user_id);
    if (user) {
      const { login_name: _l, full_name: _f, email: _e, ...rest } = user.doc;
      writes.push({
        collection: collections.users,
        id: user.id,
        doc: { ...rest, ...userProfile(attributes), updated_time: now },
        ifVersion: user.version,
      });
    }
  }
  return { userId: existing.doc.user_id, accountId: existing.id, writes };
}

/**
 * Whether an account's stored attributes equal a login's: the same keys with equal strings or string lists
 * (what an external login stores). Anything else is compared as JSON. Cheaper than stringifying both sides
 * on every login, and key order does not matter (it does not change the profile).
 */
export function sameProfile(stored: unknown, fresh: Record<string, unknown>): boolean {
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return false;
  const old = stored as Record<string, unknown>;
  let count = 0;
  for (const key in fresh) {
    count++;
    const a = old[key];
    const b = fresh[key];
    if (a === b) continue;
    if (!Array.isArray(a) || !Array.isArray(b)) {
      if (typeof a === "object" && a !== null && JSON.stringify(a) === JSON.stringify(b)) continue;
      return false;
    }
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i] && JSON.stringify(a[i]) !== JSON.stringify(b[i])) return false;
    }
  }
  let stale = 0;
  for (const _ in old) stale++;
  return stale === count;
}

export function identityLock(methodId: string, key: string): string {
  return `auth/identity/${methodId}/${key}`;
}

/**
 * Locks of an external login: its identity (so a first login creates one account) and, when the account
 * exists, the locks of the account and its user, which order the login's profile refresh with PATCH and
 * delete of them. Only logins under the identity lock create such accounts, so none appears in between.
 */
export function identityLocks(svc: AuthService, methodId: string, key: string, legacyKey?: string): string[] {
  const account = svc.state.accountByKey(methodId, key) ??
    (legacyKey === undefined ? undefined : svc.state.accountByKey(methodId, legacyKey));
  const locks = [identityLock(methodId, key)];
  if (legacyKey !== undefined && legacyKey !== key) locks.push(identityLock(methodId, legacyKey));
  if (!account) return locks;
  return [...locks, `${collections.accounts}/${account.id}`, `${collections.users}/${account.doc.user_id}`];
}
