// Signing in (docs/registry.md#getting-a-token): credentials under the login throttle, maintenance, the
// two-factor code; tokens issued to a user; SMS codes requested for a login. What POST /api/v1/authenticate
// and the web console's sign-in share.

import { ApiError } from "../../../lib/errors.ts";
import { randomSecret } from "../../../lib/ids.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { actsAsAdmin, tokenHash } from "../core/caller.ts";
import { FieldErrors } from "../core/fields.ts";
import { registryLock } from "../core/locks.ts";
import { now, type TokenDoc, TOKENS, type UserDoc, USERS } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";
import type { VerifiedIdentity } from "../../../lib/identity.ts";
import { ldapLoginKey } from "../../../lib/directory_names.ts";
import { recordSignIn, signInUserOf } from "./identities.ts";
import { REGISTRY_METHOD, signInMethods } from "./sign_in_methods.ts";

function findByLogin(reg: Registry, login: string): StoredDoc<UserDoc> | undefined {
  const lower = login.trim().toLowerCase();
  const byName = reg.user(lower);
  if (byName) return byName;
  for (const u of reg.store.list<UserDoc>(USERS)) {
    if (u.doc.email?.toLowerCase() === lower) return u;
  }
  return undefined;
}

/** A login's credentials as a caller sends them, unchecked. */
export type Credentials = { login?: unknown; password?: unknown };

/** Where a login attempt comes from: the login throttle counts failures per client address too. */
export interface LoginOrigin {
  clientIp: string;
}

/**
 * Checks `user.login` and `user.password` (with 422 messages collected in `extra` first), applies the login
 * throttle and verifies: the user, or 422, 429 or 401 (409 when a first sign-in cannot provision its user).
 */
export async function checkCredentials(
  reg: Registry,
  from: LoginOrigin,
  user: Credentials,
  extra?: FieldErrors,
): Promise<StoredDoc<UserDoc>> {
  return (await checkFirstFactor(reg, from, user, extra)).user;
}

/**
 * The first factor: the login name and password tried against each password-style sign-in method in order
 * (docs/identity.md#password-style-sign-in), the whole try one attempt of the login throttle (a wrong password
 * on all of them is one failure). `via`: the auth method that passed, when not the registry's own password.
 */
async function checkFirstFactor(
  reg: Registry,
  from: LoginOrigin,
  user: Credentials,
  extra?: FieldErrors,
): Promise<{ user: StoredDoc<UserDoc>; via?: VerifiedIdentity }> {
  const errors = extra ?? new FieldErrors();
  const login = errors.required(user, "login", "Login", 1024);
  const password = errors.required(user, "password", "Password", 1024);
  errors.throwIfAny();
  // One throttle key per user, whichever of its names (username or email) the login gives.
  const named = findByLogin(reg, login!);
  // Every spelling a directory takes for one name (an ldap sign-in method's) shares that name's count.
  // (NFKC may lengthen a name: the key is bounded as the login field is.)
  const prepared = ldapLoginKey(login!).slice(0, 1024);
  const keyed = named ?? (prepared === login!.trim().toLowerCase() ? undefined : findByLogin(reg, prepared));
  const key = keyed ? `user:${keyed.id}` : `name:${prepared}`;
  let found: StoredDoc<UserDoc> | undefined;
  let via: VerifiedIdentity | undefined;
  const verified = async () => {
    for (const method of signInMethods(reg)) {
      if (method === REGISTRY_METHOD) {
        // The user as it is once the attempt got its turn; a provisioned user has no registry password.
        found = named && reg.user(named.id);
        if (await reg.passwords.verify(found?.doc.password_hash || undefined, password!)) return true;
        found = undefined;
        continue;
      }
      const type = reg.identity?.method(method)?.type;
      if (type !== "password" && type !== "ldap") continue;
      via = await reg.identity!.verifyPassword(method, login!, password!, from.clientIp);
      if (via) return true;
    }
    return false;
  };
  if (!(await reg.loginThrottle.check(key, from.clientIp, verified))) {
    throw new ApiError(401, "Invalid login or password!");
  }
  if (via) return { user: await signInUserOf(reg, via), via };
  return { user: found! };
}

/**
 * A login as POST /authenticate checks it (also the web console's sign-in): credentials with the login throttle,
 * maintenance (admins only), then the two-factor code, whose TOTP step is recorded (no reuse). 422/401/406/429/503.
 */
export async function verifyLogin(
  reg: Registry,
  from: LoginOrigin,
  user: Credentials,
  code: unknown,
  errors = new FieldErrors(),
): Promise<StoredDoc<UserDoc>> {
  let found: StoredDoc<UserDoc>;
  let via: VerifiedIdentity | undefined;
  try {
    ({ user: found, via } = await checkFirstFactor(reg, from, user, errors));
  } catch (err) {
    // During maintenance only admin credentials get an answer other than 503.
    if (reg.maintenanceEnabled()) throw maintenanceError();
    throw err;
  }
  if (reg.maintenanceEnabled() && !actsAsAdmin(reg, found.doc)) throw maintenanceError();
  await verifySecondFactor(reg, found, code);
  // Every completed sign-in is an audit event: through an auth method, or the registry's own password.
  await recordSignIn(
    reg,
    found,
    via ?? { methodId: REGISTRY_METHOD, methodType: REGISTRY_METHOD },
    from.clientIp,
  );
  return found;
}

/**
 * The registry's two-factor code after any first factor (the password form's, an OIDC sign-in's), under the
 * per-user throttle of wrong codes, its TOTP step recorded (no reuse): 406, 429 otherwise.
 */
export async function verifySecondFactor(
  reg: Registry,
  found: StoredDoc<UserDoc>,
  code: unknown,
): Promise<void> {
  if (!found.doc.two_factor_enabled) return;
  const { totpStep } = await reg.twoFactor.checkLoginCode(
    found.id,
    found.doc,
    code,
  );
  if (totpStep === undefined) return;
  await reg.writeIn([registryLock.namespace(found.id)], () => {
    const user = reg.user(found.id);
    if (!user) return { writes: [] };
    if (user.doc.totp_last_step >= totpStep) throw new ApiError(406, "Invalid or expired two-factor code!");
    return {
      writes: [{
        collection: USERS,
        id: user.id,
        doc: { ...user.doc, totp_last_step: totpStep },
        ifVersion: user.version,
      }],
    };
  });
}

/**
 * Creates a token for `username` (its plaintext is only in the answer). `passwordHash`: the hash the login was
 * checked against; a password changed (or the user replaced) before the token commits refuses it.
 */
export async function issueToken(
  reg: Registry,
  username: string,
  description: string,
  passwordHash?: string,
) {
  const token = `wharf_${randomSecret(32)}`;
  const hash = tokenHash(reg, token);
  const createdAt = now();
  const ttl = reg.settings.tokenTtlMs;
  const doc: TokenDoc = {
    token_hash: hash,
    username,
    description,
    created_at: createdAt,
    expires_at: ttl > 0 ? new Date(Date.now() + ttl).toISOString() : null,
  };
  // Under the user's key: a user deleted meanwhile (a global write, which removes its tokens) gets none.
  await reg.writeIn([registryLock.namespace(username)], () => {
    const user = reg.user(username);
    if (!user || (passwordHash !== undefined && user.doc.password_hash !== passwordHash)) {
      throw new ApiError(401, "Invalid login or password!");
    }
    return { writes: [{ collection: TOKENS, id: hash, doc, ifVersion: 0 }] };
  });
  return { description, token, token_hash: hash, created_at: createdAt };
}

export function maintenanceError(): ApiError {
  return new ApiError(503, "wharf is down for maintenance; try again later", {
    headers: { "Retry-After": "60" },
  });
}

/**
 * Sends an SMS code to the login's user (credentials checked and throttled first, as a login): the masked
 * destination. `method` must be "sms".
 */
export async function requestCode(
  reg: Registry,
  from: LoginOrigin,
  user: Credentials,
  method: unknown,
): Promise<string> {
  const errors = new FieldErrors();
  const fields = method === undefined ? {} : { delivery_method: method };
  const delivery = errors.required(fields, "delivery_method", "Delivery method", 64);
  const found = await checkCredentials(reg, from, user, errors);
  if (delivery !== "sms") throw new ApiError(422, "Only 'sms' codes can be requested");
  return await reg.twoFactor.requestSmsCode(found.id, found.doc);
}
