// Tokens (§3): POST/GET/DELETE /api/v1/authenticate and POST /api/v1/two-factor/request-code.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import { randomSecret } from "../../../lib/ids.ts";
import { type Req } from "./auth.ts";
import { requireUser, tokenHash } from "../core/caller.ts";
import { member, readBodyObject } from "./body.ts";
import { FieldErrors } from "../core/fields.ts";
import { now, type TokenDoc, TOKENS, type UserDoc, USERS } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { registryLock } from "../core/locks.ts";

function findByLogin(reg: Registry, login: string): StoredDoc<UserDoc> | undefined {
  const lower = login.trim().toLowerCase();
  const byName = reg.user(lower);
  if (byName) return byName;
  for (const u of reg.store.list<UserDoc>(USERS)) {
    if (u.doc.email?.toLowerCase() === lower) return u;
  }
  return undefined;
}

/** Reads user.login/user.password, applies the login throttle and verifies; 422, 429 or 401 on failure. */
export async function checkCredentials(req: Req, body: Record<string, unknown>, extra?: FieldErrors) {
  const errors = extra ?? new FieldErrors();
  const user = member(body, "user");
  const login = errors.required(user, "login", "Login", 1024);
  const password = errors.required(user, "password", "Password", 1024);
  errors.throwIfAny();
  const reg = req.reg;
  // One throttle key per user, whichever of its names (username or email) the login gives.
  const named = findByLogin(reg, login!);
  const key = named ? `user:${named.id}` : `name:${login!.trim().toLowerCase()}`;
  let found: StoredDoc<UserDoc> | undefined;
  const verified = () => {
    // The user as it is once the attempt got its turn.
    found = named && reg.user(named.id);
    return reg.passwords.verify(found?.doc.password_hash, password!);
  };
  if (!(await reg.loginThrottle.check(key, req.ctx.clientIp, verified))) {
    throw new ApiError(401, "Invalid login or password!");
  }
  return found!;
}

export async function createToken(req: Req): Promise<Response> {
  const body = await readBodyObject(req);
  const errors = new FieldErrors();
  const description = errors.text(member(body, "token"), "description", "Description", 255) ?? "";
  const found = await verifyLogin(req, body, errors);
  return json(await issueToken(req.reg, found.doc.username, description, found.doc.password_hash));
}

/**
 * A login as POST /authenticate checks it (also the web console's sign-in): credentials with the login throttle,
 * maintenance (admins only), then the two-factor code, whose TOTP step is recorded (no reuse). 422/401/406/429/503.
 */
export async function verifyLogin(
  req: Req,
  body: Record<string, unknown>,
  errors = new FieldErrors(),
): Promise<StoredDoc<UserDoc>> {
  const reg = req.reg;
  let found: StoredDoc<UserDoc>;
  try {
    found = await checkCredentials(req, body, errors);
  } catch (err) {
    // During maintenance only admin credentials get an answer other than 503.
    if (reg.maintenanceEnabled()) throw maintenanceError();
    throw err;
  }
  if (reg.maintenanceEnabled() && !found.doc.admin) throw maintenanceError();
  if (!found.doc.two_factor_enabled) return found;
  const { totpStep } = await reg.twoFactor.checkLoginCode(
    found.id,
    found.doc,
    member(body, "two_factor").code,
  );
  if (totpStep === undefined) return found;
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
  return found;
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

export function validateToken(req: Req): Response {
  const user = requireUser(req);
  return json({ user: { username: user.username } });
}

export async function deleteToken(req: Req): Promise<Response> {
  requireUser(req);
  const hash = req.caller.tokenHash!;
  // The token and its holder's key (an organization's for a service principal's token: its sweep counts them).
  const keys = [registryLock.token(hash), registryLock.namespace(req.caller.userKey!)];
  await req.reg.writeIn(keys, () => ({ writes: [{ collection: TOKENS, id: hash, doc: null }] }));
  req.reg.tokenUse.delete(hash);
  return new Response(null, { status: 204 });
}

export async function requestCode(req: Req): Promise<Response> {
  const body = await readBodyObject(req);
  const errors = new FieldErrors();
  const method = errors.required(member(body, "two_factor"), "delivery_method", "Delivery method", 64);
  const found = await checkCredentials(req, body, errors);
  if (method !== "sms") throw new ApiError(422, "Only 'sms' codes can be requested");
  return await req.reg.twoFactor.requestSmsCode(found.id, found.doc);
}
