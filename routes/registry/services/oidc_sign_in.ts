// OIDC sign-in for the web console (docs/identity.md#oidc-sign-in): an oidc sign-in method's login started
// with a console callback, and the collected attempt turned into the registry user it signs in as.

import { ApiError } from "../../../lib/errors.ts";
import type { VerifiedIdentity } from "../../../lib/identity.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { actsAsAdmin } from "../core/caller.ts";
import type { UserDoc } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";
import { recordSignIn, signInUserOf } from "./identities.ts";
import { signInMethods } from "./sign_in_methods.ts";
import { type LoginOrigin, maintenanceError, verifySecondFactor } from "./tokens.ts";

/** Where the auth method's callback sends the browser back to (under the method's api_url_prefix). */
export const OIDC_COMPLETE_PATH = "/ui/login/oidc/complete";

function oidcSignInMethod(reg: Registry, methodId: string) {
  const method = signInMethods(reg).includes(methodId) ? reg.identity?.method(methodId) : undefined;
  if (!method || method.type !== "oidc") throw new ApiError(404, "That is not an OIDC sign-in method.");
  return method;
}

/**
 * Starts the method's login: the provider's URL, and the attempt's token id the browser keeps as the last
 * `.`-separated part of cookie `bindingCookie` (the callback completes the attempt only in that browser).
 */
export async function startOidcSignIn(
  reg: Registry,
  from: LoginOrigin,
  methodId: string,
  bindingCookie: string,
): Promise<{ authUrl: string; tokenId: string }> {
  oidcSignInMethod(reg, methodId);
  return await reg.identity!.startOidc(methodId, from.clientIp, OIDC_COMPLETE_PATH, bindingCookie);
}

/** A collected OIDC sign-in: the registry user, the identity it came through, and whether a code is still due. */
export interface OidcSignIn {
  user: StoredDoc<UserDoc>;
  via: VerifiedIdentity;
  /** The user has two-factor on: the console asks for the code (completeOidcSecondFactor) before a session. */
  needsCode: boolean;
}

/**
 * Collects the attempt `tokenId` of `methodId` once: the registry user it signs in as (provisioned at the first
 * sign-in; 409 on a name collision), or 401 (failed, expired, used, the method inactive now), 503 for a
 * non-admin during maintenance. Without two-factor the sign-in is complete (its event recorded); with it, the
 * code step is due.
 */
export async function completeOidcSignIn(
  reg: Registry,
  from: LoginOrigin,
  methodId: string,
  tokenId: string,
): Promise<OidcSignIn> {
  const method = oidcSignInMethod(reg, methodId);
  const outcome = await reg.identity!.collectOidc(methodId, tokenId);
  const name = method.name ?? "the identity provider";
  if (!outcome) {
    throw new ApiError(401, `This sign-in with ${name} expired or was used already; start again.`);
  }
  if (outcome.status === "pending") {
    throw new ApiError(401, `${name} has not completed this sign-in; start again.`);
  }
  if (outcome.status === "failed") throw new ApiError(401, `Unable to sign in with ${name}.`);
  // The collection answered a gone account (deleted or moved to another user) as used up: only the method is
  // checked again here.
  refuseUnofferedMethod(reg, outcome.identity);
  const user = await signInUserOf(reg, outcome.identity);
  if (reg.maintenanceEnabled() && !actsAsAdmin(reg, user.doc)) throw maintenanceError();
  // The registry's two-factor settings apply after any first factor (docs/identity.md#oidc-sign-in).
  if (user.doc.two_factor_enabled) return { user, via: outcome.identity, needsCode: true };
  await recordSignIn(reg, user, outcome.identity, from.clientIp);
  return { user, via: outcome.identity, needsCode: false };
}

/**
 * 401 unless the method of `via` is an active oidc sign-in method (made inactive or taken out of the sign-in
 * methods, it signs nobody in); its name for messages. Checked when the console collects the attempt and again
 * at each request of the code step.
 */
function refuseUnofferedMethod(reg: Registry, via: VerifiedIdentity): string {
  const method = reg.identity?.method(via.methodId);
  const name = method?.name ?? "the identity provider";
  const offered = method?.type === "oidc" && method.state !== "inactive" &&
    signInMethods(reg).includes(via.methodId);
  if (!offered) throw new ApiError(401, `${name} is not offered for sign-in now.`);
  return name;
}

/**
 * The registry user an OIDC sign-in's first factor passed for, while its code step waits: 401 when the user is
 * gone or no longer linked to that person, its method no longer offered (refuseUnofferedMethod) or its account
 * no longer the person's; 503 for a non-admin during maintenance.
 */
export function pendingOidcUser(reg: Registry, username: string, via: VerifiedIdentity): StoredDoc<UserDoc> {
  const user = reg.user(username);
  if (!user || user.doc.identity?.user_id !== via.userId) {
    throw new ApiError(401, "This sign-in expired or was used already; start again.");
  }
  const name = refuseUnofferedMethod(reg, via);
  // The account the sign-in came through is still the person's (the collection's check, repeated: it may have
  // been deleted or moved to another user while the code step waits).
  if (!reg.identity!.holdsAccount(via.userId, via.accountId)) {
    throw new ApiError(401, `This sign-in with ${name} expired or was used already; start again.`);
  }
  if (reg.maintenanceEnabled() && !actsAsAdmin(reg, user.doc)) throw maintenanceError();
  return user;
}

/**
 * The code step of an OIDC sign-in whose first factor passed for `username` through `via`: the registry's
 * two-factor check (the password form's throttle of wrong codes), then `claimStep` (the caller's step used up
 * once, on any node: it throws 401 when it was used already), then the sign-in event. 401 as pendingOidcUser;
 * 406, 429, 503 as the password form.
 */
export async function completeOidcSecondFactor(
  reg: Registry,
  from: LoginOrigin,
  username: string,
  via: VerifiedIdentity,
  code: unknown,
  claimStep: () => Promise<void>,
): Promise<StoredDoc<UserDoc>> {
  const user = pendingOidcUser(reg, username, via);
  await verifySecondFactor(reg, user, code);
  await claimStep();
  await recordSignIn(reg, user, via, from.clientIp);
  return user;
}

/**
 * An SMS code for the code step of an OIDC sign-in (the first factor passed for `username` through `via`, so no
 * password is asked): the masked destination. Bounded as after the password form, by the per-user limit of code
 * requests (docs/security.md); 401 as pendingOidcUser, 422 without SMS two-factor, 429, 500, 503.
 */
export async function requestOidcSmsCode(
  reg: Registry,
  username: string,
  via: VerifiedIdentity,
): Promise<string> {
  const user = pendingOidcUser(reg, username, via);
  return await reg.twoFactor.requestSmsCode(user.id, user.doc);
}
