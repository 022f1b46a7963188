// People and registry users (docs/identity.md#provisioning): the registry user a verified auth-method identity
// signs in as (linked, or provisioned at the first sign-in, or refused on a name collision), and the admin's
// link and unlink.

import { emailTaken } from "./users_admin.ts";
import { ApiError } from "../../../lib/errors.ts";
import type { VerifiedIdentity } from "../../../lib/identity.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { requireAdmin } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { registryIdentityChanged, registrySignIn, registryUserProvisioned } from "../core/identity_events.ts";
import { now, plainUserDoc, type UserDoc, USERS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { isValidEmail, namespacePattern, reservedNames } from "../core/rules.ts";
import { userTokenRemovals } from "./accounts.ts";
import { refuseAdminLockout } from "./sign_in_methods.ts";

/**
 * The username a first sign-in provisions (docs/identity.md#provisioning): the login name (password, ldap), the
 * `preferred_username` claim or else the e-mail's local part (oidc); lowercased, each run of characters a
 * username cannot hold made one `-`, `-` and `_` trimmed from both ends, at most 40 characters.
 */
export function provisionedUsername(identity: VerifiedIdentity): string {
  const source = identity.methodType === "oidc"
    ? identity.preferredUsername ?? identity.email?.split("@")[0] ?? ""
    : identity.loginName ?? "";
  const trim = (s: string) => s.replace(/^[-_]+|[-_]+$/g, "");
  return trim(trim(source.toLowerCase().replace(/[^a-z0-9_-]+/g, "-")).slice(0, 40));
}

/**
 * The registry user `identity` signs in as: the linked one, or one created now (event `RegistryUserProvisioned`).
 * A username that is invalid, reserved or taken by another user or an organization refuses the sign-in (409)
 * with the conflict and the administrator's remedy; nothing is created.
 */
export async function signInUserOf(reg: Registry, identity: VerifiedIdentity): Promise<StoredDoc<UserDoc>> {
  const linked = reg.linkedUsers.of(identity.userId);
  if (linked) return linked;
  const username = provisionedUsername(identity);
  // User creation reads and changes every namespace's name: the registry's global write.
  const created = await reg.write(() => {
    // Provisioned meanwhile by a sign-in that held the lock first (a map lookup, not a scan).
    const again = reg.linkedUsers.of(identity.userId);
    if (again) return { result: again.id };
    const conflict = usernameConflict(reg, username);
    if (conflict) {
      throw new ApiError(
        409,
        `Sign-in refused: ${conflict}. An administrator can link an existing registry user to this person ` +
          `with PUT /api/v2/admin/users/USERNAME/identity {"user_id":"${identity.userId}"}`,
      );
    }
    // An address the provider says is unverified is not taken: it could be someone else's.
    const email = identity.email && identity.emailVerified !== false && isValidEmail(identity.email) &&
        !emailTaken(reg, identity.email)
      ? identity.email
      : null;
    // No registry password: this person signs in through the auth methods.
    const fields = {
      username,
      email,
      password_hash: "",
      admin: false,
      identity: { user_id: identity.userId },
    };
    const doc = plainUserDoc(fields, now());
    return {
      writes: [{ collection: USERS, id: username, doc, ifVersion: 0 }],
      events: [registryUserProvisioned(username, identity)],
      result: username,
    };
  });
  return reg.user(created)!;
}

function usernameConflict(reg: Registry, username: string): string | undefined {
  if (username === "" || !namespacePattern.test(username)) {
    return "the sign-in gives no login name, preferred_username or e-mail a registry username can be made of";
  }
  if (reservedNames.has(username)) return `the username '${username}' is reserved`;
  if (reg.user(username)) return `the username '${username}' is taken by another registry user`;
  if (reg.org(username)) return `the username '${username}' is taken by an organization`;
  return undefined;
}

/**
 * The audit event of a completed sign-in (`RegistrySignIn`): through an auth method (`via` its verified
 * identity), or the registry's own password (`via` the `registry` pseudo-method, no account).
 */
export async function recordSignIn(
  reg: Registry,
  user: StoredDoc<UserDoc>,
  via: VerifiedIdentity | { methodId: string; methodType: string },
  clientIp: string,
): Promise<void> {
  await reg.store.transact([], () => ({ events: [registrySignIn(user.doc.username, via, clientIp)] }));
}

/** A registry user's link, as the admin API answers it. */
export interface IdentityLink {
  username: string;
  identity: { user_id: string } | null;
}

function renderLink(user: UserDoc): IdentityLink {
  return { username: user.username, identity: user.identity ? { user_id: user.identity.user_id } : null };
}

export function getIdentity(who: Actor, username: string): IdentityLink {
  requireAdmin(who);
  const user = who.reg.user(username);
  if (!user) throw notFound();
  return renderLink(user.doc);
}

/** Links the registry user `username` to the auth-method user `input.user_id` (409 when either is linked elsewhere). */
export async function linkIdentity(
  who: Actor,
  username: string,
  input: { user_id?: unknown },
): Promise<IdentityLink> {
  const actor = requireAdmin(who);
  const reg = who.reg;
  const userId = input.user_id;
  if (userId === undefined || userId === null || userId === "") {
    throw unprocessable(["User id can't be blank"]);
  }
  if (typeof userId !== "string" || userId.length > 128) {
    throw unprocessable(["User id must be an auth-method user id"]);
  }
  if (!reg.user(username)) throw notFound();
  if (!reg.identity?.user(userId)) throw unprocessable([`Auth-method user '${userId}' does not exist`]);
  const doc = await reg.write(() => {
    const user = reg.user(username);
    if (!user) throw notFound();
    const current = user.doc.identity?.user_id;
    if (current === userId) return { result: user.doc };
    if (current) {
      throw new ApiError(
        409,
        `Registry user '${user.doc.username}' is already linked to auth-method user '${current}'`,
      );
    }
    const other = reg.linkedUsers.of(userId);
    if (other) {
      throw new ApiError(
        409,
        `Auth-method user '${userId}' is already linked to registry user '${other.doc.username}'`,
      );
    }
    const next: UserDoc = { ...user.doc, identity: { user_id: userId }, updated_at: now() };
    return {
      writes: [{ collection: USERS, id: user.id, doc: next, ifVersion: user.version }],
      events: [registryIdentityChanged("RegistryIdentityLinked", next.username, userId, actor.username)],
      result: next,
    };
  });
  return renderLink(doc);
}

/**
 * Removes the registry user's link (nothing to remove is not an error) and, in the same commit, revokes the
 * user's API tokens: they were the person's, who no longer is this user (docs/identity.md#provisioning).
 */
export async function unlinkIdentity(who: Actor, username: string): Promise<IdentityLink> {
  const actor = requireAdmin(who);
  const reg = who.reg;
  const { doc, writes } = await reg.write(() => {
    const user = reg.user(username);
    if (!user) throw notFound();
    const current = user.doc.identity?.user_id;
    if (!current) return { result: { doc: user.doc, writes: [] } };
    const next: UserDoc = { ...user.doc, identity: null, updated_at: now() };
    refuseAdminLockout(reg, { users: new Map([[user.id, next]]) }, `Unlinking '${user.doc.username}'`);
    const writes = [
      { collection: USERS, id: user.id, doc: next, ifVersion: user.version },
      ...userTokenRemovals(reg, user.id),
    ];
    return {
      writes,
      events: [registryIdentityChanged("RegistryIdentityUnlinked", next.username, current, actor.username)],
      result: { doc: next, writes },
    };
  });
  reg.principals.forget(writes);
  return renderLink(doc);
}
