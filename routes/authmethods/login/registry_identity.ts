// The auth methods as the registry's identity provider (lib/identity.ts, docs/identity.md): method lookups,
// and a password, LDAP or console OIDC login through the method's own login that commits its account but
// mints no token.

import { ApiError } from "../../../lib/errors.ts";
import type {
  IdentityFirstStart,
  IdentityMethod,
  IdentityProvider,
  SignInMethodType,
} from "../../../lib/identity.ts";
import { collections } from "../common.ts";
import { methodState } from "../methods/methods_model.ts";
import type { AuthService } from "../service.ts";
import { type AccountDoc, holdsAccount, type ManagedGroupDoc, type UserDoc } from "../state.ts";
import { beginAttempt } from "./authenticate_oidc.ts";
import type { LoginAttempt } from "../throttle.ts";
import { checkLdap } from "./ldap_login.ts";
import type { CredentialCheck } from "./login_request.ts";
import { checkPassword } from "./password_login.ts";
import { loginCommit, loginParentLocks } from "./token_delivery.ts";

/** The :authenticate login's bounds on what it hashes and sends to the directory. */
const maxLoginNameLength = 512;
const maxPasswordLength = 4096;

/** The registry counts attempts on its own throttle (one failure for a whole sign-in): this one counts nothing. */
const uncounted: LoginAttempt = { check: (run) => run() };

export function registryIdentity(
  svc: AuthService,
  takeFirstStart: () => IdentityFirstStart | undefined,
): IdentityProvider {
  const describe = (id: string): IdentityMethod | undefined => {
    const stored = svc.state.method(id);
    if (!stored) return undefined;
    return {
      id,
      type: stored.doc.type,
      name: stored.doc.name,
      scopeId: stored.doc.scope_id,
      scopeType: svc.state.scope(stored.doc.scope_id)?.doc.type,
      state: methodState(stored.doc) ?? "active-public",
    };
  };
  return {
    method: describe,
    managedGroupsOf(userId) {
      const user = svc.state.get<UserDoc>(collections.users, userId);
      return user ? svc.state.managedGroupIdsOfAccounts(user.doc.account_ids) : [];
    },
    managedGroup(id) {
      const group = svc.state.managedGroup(id);
      if (!group) return undefined;
      return { id, type: group.doc.type, authMethodId: group.doc.auth_method_id, name: group.doc.name };
    },
    managedGroupMembers(id) {
      const group = svc.state.managedGroup(id);
      if (!group) return [];
      const people = new Set<string>();
      for (const accountId of svc.state.memberships.memberIds(id, group.doc)) {
        const userId = svc.state.get<AccountDoc>(collections.accounts, accountId)?.doc.user_id;
        if (userId) people.add(userId);
      }
      return [...people].sort();
    },
    managedGroups(limit) {
      const groups = [...svc.state.list<ManagedGroupDoc>(collections.managedGroups)];
      return groups.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0).slice(0, limit).map((g) => ({
        id: g.id,
        type: g.doc.type,
        authMethodId: g.doc.auth_method_id,
        name: g.doc.name,
      }));
    },
    watchManagedGroupRemovals(removed) {
      return svc.state.store.watch(collections.managedGroups, (change) => {
        if (!change.current) removed(change.id);
      });
    },
    takeFirstStart,
    initialAdmin() {
      const methodId = svc.state.scope("global")?.doc.primary_auth_method_id;
      if (!methodId || svc.state.method(methodId)?.doc.type !== "password") return undefined;
      const account = svc.state.accountByKey(methodId, "admin");
      return account ? { userId: account.doc.user_id, methodId } : undefined;
    },
    user(userId) {
      const user = svc.state.get<UserDoc>(collections.users, userId);
      if (!user) return undefined;
      const methods = user.doc.account_ids.flatMap((a) => {
        const account = svc.state.get<AccountDoc>(collections.accounts, a);
        return account ? [account.doc.auth_method_id] : [];
      });
      return { id: userId, accountMethodIds: methods };
    },
    holdsAccount: (userId, accountId) => holdsAccount(svc.state.store, userId, accountId),
    async startOidc(methodId, clientIp, completePath, bindingCookie) {
      const stored = svc.state.method(methodId);
      if (!stored || stored.doc.type !== "oidc") throw new ApiError(404, "Unknown sign-in method.");
      if (methodState(stored.doc) === "inactive") {
        throw new ApiError(400, "Cannot start authentication against an inactive OIDC auth method");
      }
      return await beginAttempt(svc, clientIp, methodId, stored.doc, {
        delivery: "token",
        completePath,
        bindingCookie,
      });
    },
    async collectOidc(methodId, tokenId) {
      const outcome = await svc.oidcAttempts.collect(tokenId, methodId, "console");
      if (!outcome || outcome.status === "gone") return undefined;
      if (outcome.status === "pending" || outcome.status === "failed") return { status: outcome.status };
      // A console attempt minted no token (oidc_attempts.ts): the registry signs the person in.
      if (outcome.status !== "signed-in") return { status: "failed" };
      const { user_id: userId, account_id: accountId } = outcome.signedIn;
      const account = svc.state.get<AccountDoc>(collections.accounts, accountId);
      const email = account?.doc.attributes.email;
      return {
        status: "ready",
        identity: {
          methodId,
          methodType: "oidc",
          userId,
          accountId,
          loginName: undefined,
          preferredUsername: outcome.profile.preferred_username,
          email: typeof email === "string" && email !== "" ? email : undefined,
          emailVerified: outcome.profile.email_verified === "false" ? false : undefined,
        },
      };
    },
    async verifyPassword(methodId, loginName, password, clientIp) {
      const stored = svc.state.method(methodId);
      if (!stored || (stored.doc.type !== "password" && stored.doc.type !== "ldap")) return undefined;
      if (loginName === "" || password === "") return undefined;
      if (loginName.length > maxLoginNameLength || password.length > maxPasswordLength) return undefined;
      const record = (reason: string) =>
        svc.failureEvents.record({
          methodId,
          loginName: loginName.slice(0, maxLoginNameLength),
          reason,
          clientIp,
        });
      if (stored.doc.type === "ldap" && methodState(stored.doc) === "inactive") {
        await record("inactive");
        return undefined;
      }
      const req = { id: methodId, method: stored.doc };
      // Password login names are lowercase (accounts.ts): the registry's logins are case-insensitive.
      const checked: CredentialCheck = stored.doc.type === "password"
        ? await checkPassword(svc, methodId, loginName.trim().toLowerCase(), password, uncounted)
        : await checkLdap(svc, req, loginName, password, uncounted);
      if (!checked.ok) {
        await record(checked.reason);
        return undefined;
      }
      let resolved;
      try {
        ({ result: resolved } = await loginCommit(svc.state.store.transact(checked.locks, () => {
          if (!svc.state.method(methodId)) throw new ApiError(401, "Unable to authenticate.");
          const who = checked.resolve();
          return { writes: who.writes, result: who };
        }, { sharedLocks: loginParentLocks(methodId, stored.doc) })));
      } catch (err) {
        // The account or method went while the password was checked: a wrong sign-in, as the login answers.
        if (err instanceof ApiError && err.status === 401) return undefined;
        throw err;
      }
      const account = svc.state.get<AccountDoc>(collections.accounts, resolved.accountId);
      const attrs = account?.doc.attributes ?? {};
      const text = (v: unknown) => typeof v === "string" && v !== "" ? v : undefined;
      return {
        methodId,
        methodType: stored.doc.type as SignInMethodType,
        userId: resolved.userId,
        accountId: resolved.accountId,
        loginName: text(attrs.login_name) ?? loginName,
        preferredUsername: undefined,
        email: text(attrs.email),
        emailVerified: undefined,
      };
    },
  };
}
