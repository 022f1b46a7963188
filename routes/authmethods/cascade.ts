// Deleting a method takes its accounts, their users and tokens, and its managed groups with it (and an org
// takes its methods); this builds the writes, tombstones and events for one commit, and refuses to remove the
// last admin. Revoking a user's tokens commits holding every one of their token locks (transactRevoking).

import type { CommitPlan, DocWrite, EventInput } from "../../lib/store/mod.ts";
import { collections, lockKeys } from "./common.ts";
import { failedPrecondition } from "./errors.ts";
import { managedGroupEvent } from "./memberships.ts";
import { type ActorCaller, type AuthState, type MethodDoc, methodEvent, type UserDoc } from "./state.ts";

export interface CascadePlan {
  writes: DocWrite[];
  events: EventInput[];
  /** Users removed, to check the last-admin rule across a whole plan. */
  removedUsers: Set<string>;
}

export function emptyPlan(): CascadePlan {
  return { writes: [], events: [], removedUsers: new Set() };
}

/** Adds the deletion of accounts (their users and tokens) to `plan`. */
export function deleteAccounts(
  state: AuthState,
  accountIds: string[],
  plan: CascadePlan,
  now: string,
  reason: string,
): void {
  for (const accountId of accountIds) {
    const acct = state.get<{ user_id: string; scope_id: string; auth_method_id: string }>(
      collections.accounts,
      accountId,
    );
    if (!acct) continue;
    plan.writes.push({ collection: collections.accounts, id: accountId, doc: null });
    plan.writes.push(state.tombstone(accountId, "account", acct.doc.scope_id, now, acct.doc.auth_method_id));
    const user = state.get<UserDoc>(collections.users, acct.doc.user_id);
    if (user && !plan.removedUsers.has(user.id)) {
      plan.removedUsers.add(user.id);
      plan.writes.push({ collection: collections.users, id: user.id, doc: null });
      plan.writes.push(state.tombstone(user.id, "user", user.doc.scope_id, now));
      const revoked = state.revokeTokens(state.tokensOfUser(user.id), reason, now);
      plan.writes.push(...revoked.writes);
      plan.events.push(...revoked.events);
    }
  }
}

/** Adds the deletion of a method and everything under it to `plan`. */
export function deleteMethod(
  state: AuthState,
  id: string,
  doc: MethodDoc,
  version: number,
  actor: ActorCaller,
  plan: CascadePlan,
  now: string,
): void {
  deleteAccounts(state, state.accountsOfMethod(id).map((a) => a.id), plan, now, "cascade");
  for (const groupId of state.memberships.groupIdsOfMethod(id)) {
    const group = state.managedGroup(groupId);
    if (!group) continue;
    plan.writes.push({ collection: collections.managedGroups, id: groupId, doc: null });
    plan.writes.push(state.tombstone(groupId, "managed-group", group.doc.scope_id, now, id));
    plan.events.push(managedGroupEvent("ManagedGroupDeleted", groupId, group.doc, group.version, actor));
  }
  plan.writes.push({ collection: collections.methods, id, doc: null });
  plan.writes.push(state.tombstone(id, "auth-method", doc.scope_id, now));
  plan.events.push(methodEvent("AuthMethodDeleted", id, doc, version, actor));
}

/** 400 FailedPrecondition when the plan removes every remaining admin. */
export function assertAdminsRemain(
  state: AuthState,
  plan: CascadePlan,
  demoted: Set<string> = new Set(),
): void {
  let before = 0;
  let after = 0;
  for (const u of state.list<UserDoc>(collections.users)) {
    if (!u.doc.admin) continue;
    before++;
    if (!plan.removedUsers.has(u.id) && !demoted.has(u.id)) after++;
  }
  if (before > 0 && after === 0) throw failedPrecondition("Cannot remove the last admin.");
}

/** A revoking plan met a token minted after its locks were chosen: the commit is run again with its lock. */
class TokenLocksOutdated extends Error {}

/**
 * Commits `plan`, which revokes tokens of `userId`, holding every one of that user's token locks: the key
 * every token deleter takes (logout, sweeps), so one committing at the same moment finds the token gone and
 * emits no second AuthTokenDeleted event. The token locks are chosen before the locks are taken; a login
 * holding the account lock (which `locks` includes) can mint a token in between, and then the commit is run
 * again with that token's lock as well. Only logins queued on the account lock ahead of the retry can mint
 * another, so the retries end.
 */
export async function transactRevoking<R>(
  state: AuthState,
  userId: string,
  locks: string[],
  sharedLocks: string[],
  plan: () => CommitPlan<R>,
): Promise<R> {
  for (;;) {
    const tokenLocks = new Set(state.tokensOfUser(userId).map((t) => lockKeys.token(t.id)));
    try {
      const { result } = await state.store.transact([...locks, ...tokenLocks], () => {
        if (state.tokensOfUser(userId).some((t) => !tokenLocks.has(lockKeys.token(t.id)))) {
          throw new TokenLocksOutdated();
        }
        return plan();
      }, { sharedLocks });
      return result;
    } catch (err) {
      if (!(err instanceof TokenLocksOutdated)) throw err;
    }
  }
}
