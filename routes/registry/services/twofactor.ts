// A user's authenticator app (TOTP): start an enrolment, confirm it with a code of the new app, remove it, by an
// administrator (audited) or by the user with a current code of the active second factor.

import { ApiError } from "../../../lib/errors.ts";
import { notFound } from "../core/errors.ts";
import { registryLock } from "../core/locks.ts";
import { now, type UserDoc, USERS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { newTotpSecret, otpauthUrl } from "../core/twofactor.ts";
import { type TwoFactorChange, twoFactorChanged } from "../core/user_events.ts";
import { accountOf, type Whose } from "./accounts.ts";

/**
 * Who may start, confirm or remove an authenticator app: an administrator through the admin API (each change
 * is an audit event), or the user, who needs a current code of the active second factor when there is one (the
 * app, or SMS with two-factor on): a session alone, e.g. a borrowed laptop, may not change the second factor.
 */
export type TotpAuthority = { user: string } | { currentCode: string };

/**
 * Who changes which user's app: the named user's by an administrator, or the caller's own with a current
 * code.
 */
type Change = { key: string; admin: string } | { key: string; currentCode: string };

function changeOf(who: Actor, authority: TotpAuthority): Change {
  if ("user" in authority) {
    const { key, admin } = accountOf(who, authority);
    return { key, admin: admin!.username };
  }
  return { key: accountOf(who, "own").key, currentCode: authority.currentCode };
}

/** The user's active second factor (the app's sealed secret, SMS when two-factor is on), "" when none. */
function activeSecondFactor(user: UserDoc): string {
  const sms = user.two_factor_enabled && user.mobile ? `sms:${user.mobile}` : "";
  return user.totp_secret || sms ? `${user.totp_secret ?? ""}|${sms}` : "";
}

/**
 * For the user's own change: the active second factor once `currentCode` is a current code of it ("" when none
 * is active); 422 when the code is missing or wrong (counted by the two-factor throttle, 429 past it).
 */
async function provenSecondFactor(reg: Registry, authority: Change): Promise<string> {
  if ("admin" in authority) return "";
  const key = authority.key;
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
function sameSecondFactor(authority: Change, user: UserDoc, proven: string): void {
  if ("currentCode" in authority && activeSecondFactor(user) !== proven) {
    throw new ApiError(422, "Invalid two-factor code");
  }
}

function auditOf(authority: Change, username: string, change: TwoFactorChange) {
  return "admin" in authority ? [twoFactorChanged(username, authority.admin, change)] : [];
}

/** Starts an authenticator app enrolment for a user (admin API, and a user's own security page). */
export async function enrolTotp(who: Actor, as: TotpAuthority) {
  const reg = who.reg;
  const authority = changeOf(who, as);
  const key = authority.key;
  const proven = await provenSecondFactor(reg, authority);
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

/**
 * Activates the pending enrolment with a valid code of the new app: by an administrator (the admin API,
 * audited), or the user's own confirmation, which also turns two-factor on. (A pending enrolment over an
 * active app was started with a current code of it, or by an administrator.)
 */
export async function confirmTotp(who: Actor, whose: Whose, code: string): Promise<UserDoc> {
  const reg = who.reg;
  const { key, admin: adminDoc } = accountOf(who, whose);
  const admin = adminDoc?.username;
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

/** Removes the authenticator app; two-factor stays on only when SMS remains. */
export async function removeTotp(who: Actor, as: TotpAuthority): Promise<UserDoc> {
  const reg = who.reg;
  const authority = changeOf(who, as);
  const key = authority.key;
  if ("currentCode" in authority && !reg.user(key)?.doc.totp_secret) {
    throw new ApiError(422, "No authenticator app is set up");
  }
  const proven = await provenSecondFactor(reg, authority);
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
