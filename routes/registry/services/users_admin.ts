// Users for an administrator (docs/registry.md#users-and-organizations-admin-api): list, create and update
// (two-factor changes audited).

import { requireAdmin } from "../core/caller.ts";
import { unprocessable } from "../core/errors.ts";
import { FieldErrors } from "../core/fields.ts";
import { now, type UserDoc, USERS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { isValidEmail, LONG_TEXT_MAX, mobilePattern } from "../core/rules.ts";
import { type TwoFactorChange, twoFactorChanged } from "../core/user_events.ts";
import { refuseAdminLockout } from "./sign_in_methods.ts";
import {
  adminCount,
  allDocs,
  existingUserOf as existingUser,
  type NamespaceRemoval,
  newNamespaceName,
  smsCodeVoiding,
  userRemovalWrites,
} from "./accounts.ts";

/** A user's fields as an administrator sends them, unchecked: every rule on them and its 422 message is here. */
export type UserInput = {
  username?: unknown;
  email?: unknown;
  password?: unknown;
  mobile?: unknown;
  admin?: unknown;
  two_factor_enabled?: unknown;
  profile?: unknown;
  delinquent?: unknown;
};

/** Whether another user (not `exceptKey`) has this e-mail, compared without case. */
export function emailTaken(reg: Registry, email: string, exceptKey?: string): boolean {
  const lower = email.toLowerCase();
  for (const u of reg.store.list<UserDoc>(USERS)) {
    if (u.id !== exceptKey && u.doc.email?.toLowerCase() === lower) return true;
  }
  return false;
}

/** Reads the optional user fields shared by create and update. */
function readUserFields(errors: FieldErrors, body: UserInput) {
  const email = errors.text(body, "email", "Email", 254);
  if (typeof email === "string" && !isValidEmail(email)) errors.add("Email is invalid");
  const password = errors.text(body, "password", "Password", 1024);
  if (typeof password === "string" && password.length < 8) {
    errors.add("Password is too short (minimum is 8 characters)");
  }
  const mobile = errors.text(body, "mobile", "Mobile", 16);
  if (typeof mobile === "string" && !mobilePattern.test(mobile)) {
    errors.add("Mobile must be an E.164 number like +15551231234");
  }
  return {
    email,
    password,
    mobile,
    admin: errors.bool(body, "admin", "Admin"),
    twoFactor: errors.bool(body, "two_factor_enabled", "Two factor enabled"),
    profile: errors.text(body, "profile", "Profile", LONG_TEXT_MAX),
  };
}

/** Every user (admins only). */
export function listUsers(who: Actor): UserDoc[] {
  return allDocs<UserDoc>(who, USERS);
}

/** A new user (admins only); the password is hashed in the node's bounded hashing queue. */
export async function createUser(who: Actor, body: UserInput): Promise<UserDoc> {
  requireAdmin(who);
  const errors = new FieldErrors();
  const username = newNamespaceName(errors, body, "username", "Username");
  const f = readUserFields(errors, body);
  if (f.email === undefined || f.email === null) errors.add("Email can't be blank");
  if (f.password === undefined || f.password === null) errors.add("Password can't be blank");
  if (f.twoFactor && !f.mobile) {
    errors.add("Two-factor authentication needs a mobile number or an authenticator app");
  }
  errors.throwIfAny();
  const passwordHash = await who.reg.passwords.hash(f.password!);
  const reg = who.reg;
  const key = username!.toLowerCase();
  return await reg.write(() => {
    const taken: string[] = [];
    if (reg.namespaceName(key) !== undefined) taken.push("Username has already been taken");
    if (emailTaken(reg, f.email!)) taken.push("Email has already been taken");
    if (taken.length) throw unprocessable(taken);
    const t = now();
    const doc: UserDoc = {
      username: username!,
      email: f.email!,
      password_hash: passwordHash,
      mobile: f.mobile ?? null,
      admin: f.admin === true,
      two_factor_enabled: f.twoFactor === true,
      totp_secret: null,
      totp_pending: null,
      totp_last_step: 0,
      profile: f.profile ?? null,
      delinquent: false,
      created_at: t,
      updated_at: t,
    };
    return { writes: [{ collection: USERS, id: key, doc, ifVersion: 0 }], result: doc };
  });
}

/** Changes the user `name` (admins only): the user after. Two-factor changes are audit events. */
export async function updateUser(who: Actor, name: string, body: UserInput): Promise<UserDoc> {
  const actor = requireAdmin(who);
  existingUser(who.reg, name);
  const errors = new FieldErrors();
  const f = readUserFields(errors, body);
  if (f.email === null) errors.add("Email can't be blank");
  const delinquent = errors.bool(body, "delinquent", "Delinquent");
  errors.throwIfAny();
  const passwordHash = typeof f.password === "string" ? await who.reg.passwords.hash(f.password) : undefined;
  const reg = who.reg;
  return await reg.write(() => {
    const current = existingUser(reg, name);
    const next: UserDoc = { ...current.doc, updated_at: now() };
    const problems: string[] = [];
    if (typeof f.email === "string") {
      if (emailTaken(reg, f.email, current.id)) problems.push("Email has already been taken");
      next.email = f.email;
    }
    if (passwordHash) next.password_hash = passwordHash;
    if (f.mobile !== undefined) next.mobile = f.mobile;
    if (typeof f.admin === "boolean") next.admin = f.admin;
    if (typeof f.twoFactor === "boolean") next.two_factor_enabled = f.twoFactor;
    if (f.profile !== undefined) next.profile = f.profile;
    if (typeof delinquent === "boolean") next.delinquent = delinquent;
    if (next.two_factor_enabled && !next.mobile && !next.totp_secret) {
      problems.push("Two-factor authentication needs a mobile number or an authenticator app");
    }
    if (current.doc.admin && !next.admin && adminCount(reg) <= 1) {
      problems.push("The last admin cannot be demoted");
    }
    if (problems.length) throw unprocessable(problems);
    if (current.doc.admin && !next.admin) {
      refuseAdminLockout(reg, { users: new Map([[current.id, next]]) }, `Demoting '${current.doc.username}'`);
    }
    // A code sent to the old number, or for two-factor now off, is void.
    const voidCode = f.mobile !== undefined || f.twoFactor === false ? smsCodeVoiding(reg, current.id) : [];
    const changes: TwoFactorChange[] = [];
    if (next.two_factor_enabled !== current.doc.two_factor_enabled) {
      changes.push(next.two_factor_enabled ? "two-factor-on" : "two-factor-off");
    }
    if (next.mobile !== current.doc.mobile) changes.push("mobile-changed");
    return {
      writes: [{ collection: USERS, id: current.id, doc: next, ifVersion: current.version }, ...voidCode],
      events: changes.map((change) => twoFactorChanged(next.username, actor.username, change)),
      result: next,
    };
  });
}

/**
 * How the user `name` is deleted (`deleteNamespace`, admins only): never the last admin; their tokens and
 * memberships go with them.
 */
export function userRemoval(reg: Registry, name: string): NamespaceRemoval<UserDoc> {
  return {
    label: "User",
    find: () => existingUser(reg, name),
    refusals: (current) => {
      if (current.doc.admin && adminCount(reg) <= 1) return ["The last admin cannot be deleted"];
      refuseAdminLockout(reg, { users: new Map([[current.id, null]]) }, `Deleting '${current.doc.username}'`);
      return [];
    },
    writes: (current) => userRemovalWrites(reg, current.id),
  };
}
