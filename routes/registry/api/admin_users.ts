// Admin API for users (§5): list, create, read, update, delete (cascade), TOTP enrolment, tokens.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import { type Req } from "./auth.ts";
import { requireAdmin } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors, type Payload } from "../core/fields.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { now, type TokenDoc, TOKENS, type UserDoc, USERS } from "../core/model.ts";
import {
  isValidEmail,
  LONG_TEXT_MAX,
  mobilePattern,
  namespacePattern,
  reservedNames,
} from "../core/rules.ts";
import {
  adminCount,
  deleteNamespaceBoxes,
  renderAdminUser,
  smsCodeRemoval,
  userRemovalWrites,
} from "../services/accounts.ts";
import { newTotpSecret, otpauthUrl } from "../core/twofactor.ts";
import { type TwoFactorChange, twoFactorChanged } from "../core/user_events.ts";
import type { Registry } from "../core/registry.ts";
import { registryLock } from "../core/locks.ts";

function view(req: Req) {
  return { reg: req.reg, origin: req.origin, insider: true };
}

function existingUser(req: Req) {
  const user = req.reg.user(req.ctx.params.name ?? "");
  if (!user) throw notFound();
  return user;
}

function emailTaken(reg: Registry, email: string, exceptKey?: string): boolean {
  const lower = email.toLowerCase();
  for (const u of reg.store.list<UserDoc>(USERS)) {
    if (u.id !== exceptKey && u.doc.email?.toLowerCase() === lower) return true;
  }
  return false;
}

/** Reads the optional user fields shared by create and update. */
function readUserFields(errors: FieldErrors, body: Payload) {
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

export function listUsers(req: Req): Response {
  requireAdmin(req);
  const users = [...req.reg.store.list<UserDoc>(USERS)].map((u) => renderAdminUser(req.reg, u.doc));
  return json({ users });
}

export function getUser(req: Req): Response {
  requireAdmin(req);
  return json(renderAdminUser(req.reg, existingUser(req).doc));
}

export async function createUser(req: Req): Promise<Response> {
  const body = await readPayload(req, "user");
  requireAdmin(req);
  const errors = new FieldErrors();
  const username = errors.required(body, "username", "Username", 40);
  if (username !== undefined && !namespacePattern.test(username)) errors.add("Username is invalid");
  else if (username !== undefined && reservedNames.has(username.toLowerCase())) {
    errors.add("Username is reserved");
  }
  const f = readUserFields(errors, body);
  if (f.email === undefined || f.email === null) errors.add("Email can't be blank");
  if (f.password === undefined || f.password === null) errors.add("Password can't be blank");
  if (f.twoFactor && !f.mobile) {
    errors.add("Two-factor authentication needs a mobile number or an authenticator app");
  }
  errors.throwIfAny();
  const passwordHash = await req.reg.passwords.hash(f.password!);
  const reg = req.reg;
  const key = username!.toLowerCase();
  const doc = await reg.write(() => {
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
  return json(renderAdminUser(reg, doc));
}

export async function updateUser(req: Req): Promise<Response> {
  const body = await readPayload(req, "user");
  const actor = requireAdmin(req);
  existingUser(req);
  const errors = new FieldErrors();
  const f = readUserFields(errors, body);
  if (f.email === null) errors.add("Email can't be blank");
  const delinquent = errors.bool(body, "delinquent", "Delinquent");
  errors.throwIfAny();
  const passwordHash = typeof f.password === "string" ? await req.reg.passwords.hash(f.password) : undefined;
  const reg = req.reg;
  const doc = await reg.write(() => {
    const current = existingUser(req);
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
    // A code sent to the old number, or for two-factor now off, is void.
    const voidCode = f.mobile !== undefined || f.twoFactor === false ? smsCodeRemoval(reg, current.id) : [];
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
  return json(renderAdminUser(reg, doc));
}

export async function deleteUser(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  existingUser(req);
  const cascade = req.ctx.url.searchParams.get("cascade") === "true";
  const reg = req.reg;
  const doc = await reg.write(() => {
    const current = existingUser(req);
    const problems: string[] = [];
    if (current.doc.admin && adminCount(reg) <= 1) problems.push("The last admin cannot be deleted");
    if (!cascade && reg.boxesOf(current.id).length > 0) {
      problems.push("User owns boxes; delete them first or pass cascade=true");
    }
    if (problems.length) throw unprocessable(problems);
    const boxes = deleteNamespaceBoxes(reg, view(req), current.id, actor.username);
    return {
      writes: [...boxes.writes, ...userRemovalWrites(reg, current.id)],
      events: boxes.events,
      result: current.doc,
    };
  });
  return json(renderAdminUser(reg, doc));
}

export async function enrolTotp(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  return json(await enrolTotpFor(req.reg, existingUser(req).id, { admin: actor.username }));
}

/**
 * Who may start, confirm or remove an authenticator app: an administrator through the admin API (each change
 * is an audit event), or the user, who needs a current code of the active second factor when there is one (the
 * app, or SMS with two-factor on): a session alone, e.g. a borrowed laptop, may not change the second factor.
 */
export type TotpAuthority = { admin: string } | { currentCode: string };

/** The user's active second factor (the app's sealed secret, SMS when two-factor is on), "" when none. */
function activeSecondFactor(user: UserDoc): string {
  const sms = user.two_factor_enabled && user.mobile ? `sms:${user.mobile}` : "";
  return user.totp_secret || sms ? `${user.totp_secret ?? ""}|${sms}` : "";
}

/**
 * For the user's own change: the active second factor once `currentCode` is a current code of it ("" when none
 * is active); 422 when the code is missing or wrong (counted by the two-factor throttle, 429 past it).
 */
async function provenSecondFactor(reg: Registry, key: string, authority: TotpAuthority): Promise<string> {
  if ("admin" in authority) return "";
  const user = reg.user(key);
  if (!user) throw notFound();
  const active = activeSecondFactor(user.doc);
  if (!active) return "";
  if (authority.currentCode.trim() === "") {
    throw new ApiError(
      422,
      user.doc.totp_secret
        ? "A current code from your authenticator app is required"
        : "A current two-factor code is required: have one sent by SMS first",
    );
  }
  if (!await reg.twoFactor.checkCurrentCode(key, user.doc, authority.currentCode)) {
    throw new ApiError(422, "Invalid two-factor code");
  }
  return active;
}

/** The second factor proven before the write must still be the active one (not changed meanwhile). */
function sameSecondFactor(authority: TotpAuthority, user: UserDoc, proven: string): void {
  if ("currentCode" in authority && activeSecondFactor(user) !== proven) {
    throw new ApiError(422, "Invalid two-factor code");
  }
}

function auditOf(authority: TotpAuthority, username: string, change: TwoFactorChange) {
  return "admin" in authority ? [twoFactorChanged(username, authority.admin, change)] : [];
}

/** Starts an authenticator app enrolment for a user (admin API, and a user's own security page). */
export async function enrolTotpFor(reg: Registry, key: string, authority: TotpAuthority) {
  const proven = await provenSecondFactor(reg, key, authority);
  const secret = newTotpSecret();
  // One user's document (ifVersion): that user's key.
  const doc = await reg.writeIn([registryLock.namespace(key)], () => {
    const current = reg.user(key);
    if (!current) throw notFound();
    sameSecondFactor(authority, current.doc, proven);
    const next = {
      ...current.doc,
      totp_pending: reg.twoFactor.sealSecret(current.id, secret),
      updated_at: now(),
    };
    return {
      writes: [{ collection: USERS, id: current.id, doc: next, ifVersion: current.version }],
      events: auditOf(authority, next.username, "totp-enrolment-started"),
      result: next,
    };
  });
  return { otpauth_url: otpauthUrl(reg.settings.totpIssuer, doc.username, secret), secret };
}

export async function confirmTotp(req: Req): Promise<Response> {
  const body = await readPayload(req, "totp");
  const actor = requireAdmin(req);
  const key = existingUser(req).id;
  const errors = new FieldErrors();
  const code = errors.required(body, "code", "Code", 16);
  errors.throwIfAny();
  const doc = await confirmTotpFor(req.reg, key, code!, actor.username);
  return json(renderAdminUser(req.reg, doc));
}

/**
 * Activates the pending enrolment with a valid code of the new app: by an administrator (`admin`, audited), or
 * the user's own confirmation, which also turns two-factor on. (A pending enrolment over an active app was
 * started with a current code of it, or by an administrator.)
 */
export async function confirmTotpFor(
  reg: Registry,
  key: string,
  code: string,
  admin?: string,
): Promise<UserDoc> {
  return await reg.writeIn([registryLock.namespace(key)], () => {
    const current = reg.user(key);
    if (!current) throw notFound();
    if (!current.doc.totp_pending) throw new ApiError(422, "No authenticator app enrolment is pending");
    const pending = current.doc.totp_pending;
    const secret = reg.twoFactor.openSecret(current.id, pending);
    const sealed = reg.twoFactor.sealSecret(current.id, secret);
    const step = reg.twoFactor.totpStep(current.id, pending, code.trim(), 0);
    if (step === undefined) throw new ApiError(422, "Invalid two-factor code");
    const next = {
      ...current.doc,
      totp_secret: sealed,
      totp_pending: null,
      totp_last_step: step,
      updated_at: now(),
    };
    if (admin === undefined) next.two_factor_enabled = true;
    return {
      writes: [{ collection: USERS, id: current.id, doc: next, ifVersion: current.version }],
      events: admin === undefined ? [] : [twoFactorChanged(next.username, admin, "totp-confirmed")],
      result: next,
    };
  });
}

export async function removeTotp(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  const doc = await removeTotpFor(req.reg, existingUser(req).id, { admin: actor.username });
  return json(renderAdminUser(req.reg, doc));
}

/** Removes the authenticator app; two-factor stays on only when SMS remains. */
export async function removeTotpFor(reg: Registry, key: string, authority: TotpAuthority): Promise<UserDoc> {
  if ("currentCode" in authority && !reg.user(key)?.doc.totp_secret) {
    throw new ApiError(422, "No authenticator app is set up");
  }
  const proven = await provenSecondFactor(reg, key, authority);
  return await reg.writeIn([registryLock.namespace(key)], () => {
    const current = reg.user(key);
    if (!current) throw notFound();
    sameSecondFactor(authority, current.doc, proven);
    const next = { ...current.doc, totp_secret: null, totp_pending: null, updated_at: now() };
    if (next.two_factor_enabled && !next.mobile) next.two_factor_enabled = false;
    return {
      writes: [{ collection: USERS, id: current.id, doc: next, ifVersion: current.version }],
      events: auditOf(authority, next.username, "totp-removed"),
      result: next,
    };
  });
}

export function listUserTokens(req: Req): Response {
  requireAdmin(req);
  const tokens = tokensOf(req.reg, existingUser(req).id).map(({ expires_at: _, ...t }) => t);
  return json({ tokens });
}

/** A user's tokens (service principals' tokens are not theirs), without secrets. */
export function tokensOf(reg: Registry, key: string) {
  return [...reg.store.list<TokenDoc>(TOKENS)]
    .filter((t) => typeof t.doc.principal !== "string" && t.doc.username.toLowerCase() === key)
    .map((t) => {
      const used = reg.tokenUse.get(t.id);
      return {
        token_hash: t.id,
        description: t.doc.description,
        created_at: t.doc.created_at,
        expires_at: t.doc.expires_at,
        last_used_at: used ? new Date(used).toISOString() : null,
      };
    });
}

export async function deleteUserToken(req: Req): Promise<Response> {
  requireAdmin(req);
  await deleteTokenOf(req.reg, existingUser(req).id, req.ctx.params.token_hash ?? "");
  return new Response(null, { status: 204 });
}

/** Revokes one of a user's tokens; 404 when it is not theirs. */
export async function deleteTokenOf(reg: Registry, key: string, hash: string): Promise<void> {
  await reg.writeIn([registryLock.namespace(key), registryLock.token(hash)], () => {
    const token = reg.store.get<TokenDoc>(TOKENS, hash);
    if (!token || token.doc.username.toLowerCase() !== key) throw notFound();
    return { writes: [{ collection: TOKENS, id: hash, doc: null }] };
  });
  reg.tokenUse.delete(hash);
}
