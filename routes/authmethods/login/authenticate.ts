// POST /v1/auth-methods/{id}:authenticate: body parsing shared by every type, the throttled password login,
// and token delivery (body or split cookies). OIDC commands live in authenticate_oidc.ts, the LDAP login in
// ldap_login.ts.

import { ApiError } from "../../../lib/errors.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import { type DocWrite, type StoredDoc, VersionConflictError } from "../../../lib/store/mod.ts";
import { asAttrs } from "../methods/attrs_common.ts";
import { assertIdFormat, collections, isObject, nowIso, parentLocks } from "../common.ts";
import { failedPrecondition, fieldError, notFound } from "../errors.ts";
import { methodIdPrefixes } from "../methods/methods.ts";
import { accountWithUser, userProfile } from "../principals.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import type { AccountDoc, MethodDoc, UserDoc } from "../state.ts";
import {
  cookiesSecure,
  mintToken,
  type NewToken,
  renderToken,
  splitCookies,
  tokenIssuedEvent,
} from "../tokens.ts";
import { oidcCommand } from "./authenticate_oidc.ts";
import { ldapLogin } from "./ldap_login.ts";

export interface AuthRequest {
  id: string;
  method: MethodDoc;
  command: string | undefined;
  /** "token" or "cookie" (lowercased); `typeEcho` is what to echo back when the client sent one. */
  delivery: "token" | "cookie";
  typeEcho: string | undefined;
  attributes: Record<string, unknown>;
}

/** Bounds on login input: the throttle keeps names in memory and argon2 hashes the whole password. */
const maxLoginNameLength = 512;
const maxPasswordLength = 4096;

export const unableToAuthenticate = () => new ApiError(401, "Unable to authenticate.");

function parseDelivery(
  body: Record<string, unknown>,
): { delivery: "token" | "cookie"; echo: string | undefined } {
  const read = (key: "type" | "token_type"): string | undefined => {
    const v = body[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string" || !["token", "cookie"].includes(v.toLowerCase())) {
      throw fieldError({ name: key, description: 'Must be "token" or "cookie".' });
    }
    return v;
  };
  const type = read("type");
  const tokenType = read("token_type");
  if (type && tokenType && type.toLowerCase() !== tokenType.toLowerCase()) {
    throw fieldError({ name: "token_type", description: 'Conflicts with "type"; send only "type".' });
  }
  const chosen = type ?? tokenType;
  return { delivery: (chosen?.toLowerCase() ?? "token") as "token" | "cookie", echo: type };
}

export async function authenticate(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  assertIdFormat(id, methodIdPrefixes);
  const body = await readObjectBody(ctx);
  const { delivery, echo } = parseDelivery(body);
  if (body.command !== undefined && body.command !== null && typeof body.command !== "string") {
    throw fieldError({ name: "command", description: "Invalid command for this auth method type." });
  }
  if (body.attributes !== undefined && body.attributes !== null && !isObject(body.attributes)) {
    throw fieldError({ name: "attributes", description: "Expected an object." });
  }
  const stored = svc.state.method(id);
  if (!stored) throw notFound();
  const req: AuthRequest = {
    id,
    method: stored.doc,
    command: (body.command as string | undefined) || undefined,
    delivery,
    typeEcho: echo,
    attributes: asAttrs(body.attributes) ?? {},
  };
  if (stored.doc.type === "oidc") return await oidcCommand(svc, ctx, req);
  if (req.command !== undefined && req.command !== "login") {
    throw fieldError({ name: "command", description: "Invalid command for this auth method type." });
  }
  if (stored.doc.type === "ldap" && stored.doc.attributes.state === "inactive") {
    const name = typeof req.attributes.login_name === "string" ? req.attributes.login_name.slice(0, 512) : "";
    await recordFailure(svc, ctx, id, name, "inactive");
    throw failedPrecondition("Cannot authenticate against an inactive LDAP auth method");
  }
  const loginName = req.attributes.login_name;
  const password = req.attributes.password;
  const missing = [];
  if (typeof loginName !== "string" || loginName === "") {
    missing.push({ name: "attributes.login_name", description: "This is a required field." });
  }
  if (typeof password !== "string" || password === "") {
    missing.push({ name: "attributes.password", description: "This is a required field." });
  }
  if (typeof loginName === "string" && loginName.length > maxLoginNameLength) {
    missing.push({ name: "attributes.login_name", description: `At most ${maxLoginNameLength} characters.` });
  }
  if (typeof password === "string" && password.length > maxPasswordLength) {
    missing.push({ name: "attributes.password", description: `At most ${maxPasswordLength} characters.` });
  }
  if (missing.length) throw fieldError(missing);
  return stored.doc.type === "password"
    ? await passwordLogin(svc, ctx, req, loginName as string, password as string)
    : await ldapLogin(svc, ctx, req, loginName as string, password as string);
}

/**
 * Begins a throttled attempt under the name key `nameKey` (429 when locked, recorded as a `throttled` failure for
 * `loginName` as sent).
 */
export async function beginAttempt(
  svc: AuthService,
  ctx: RequestContext,
  methodId: string,
  nameKey: string,
  loginName: string,
) {
  try {
    return await svc.throttle.begin(methodId, nameKey, ctx.clientIp);
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) {
      await recordFailure(svc, ctx, methodId, loginName, "throttled");
    }
    throw err;
  }
}

/** An `AuthenticationFailed` event, or a count in the window's summary past the bounds (failure_events.ts). */
export async function recordFailure(
  svc: AuthService,
  ctx: RequestContext,
  methodId: string,
  loginName: string,
  reason: string,
): Promise<void> {
  await svc.failureEvents.record({ methodId, loginName, reason, clientIp: ctx.clientIp });
}

async function passwordLogin(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
  loginName: string,
  password: string,
): Promise<Response> {
  const attempt = await beginAttempt(svc, ctx, req.id, loginName, loginName);
  const account = svc.state.accountByKey(req.id, loginName);
  const ok = await attempt.check(() => svc.hasher.verify(account?.doc.password_hash, password));
  if (!ok || !account) {
    await recordFailure(svc, ctx, req.id, loginName, "invalid_credentials");
    throw unableToAuthenticate();
  }
  const verifiedHash = account.doc.password_hash;
  const rehashed = verifiedHash && svc.hasher.needsRehash(verifiedHash)
    ? await svc.hasher.hash(password)
    : undefined;
  // The account's own lock orders this login with set-/change-password and deletes of the account.
  const locks = [identityLock(req.id, loginName), `${collections.accounts}/${account.id}`];
  return await issueAndDeliver(svc, ctx, req, locks, () => {
    // The account may have been deleted, or its password replaced (revoking every token), while the
    // password was being checked: a token minted now would outlive that revocation.
    const cur = svc.state.get<AccountDoc>(collections.accounts, account.id);
    if (!cur || cur.doc.password_hash !== verifiedHash) throw unableToAuthenticate();
    const writes: DocWrite[] = rehashed
      ? [{
        collection: collections.accounts,
        id: cur.id,
        doc: { ...cur.doc, password_hash: rehashed },
        ifVersion: cur.version,
      }]
      : [];
    return { userId: cur.doc.user_id, accountId: cur.id, writes };
  });
}

/**
 * Finds the account of an external identity or creates it with its user; refreshes the profile. With no
 * account under `key`, the one `adopt` finds (keyed the way of an older release) becomes the identity's.
 */
export function upsertExternalAccount(
  svc: AuthService,
  req: { id: string; method: MethodDoc },
  key: string,
  attributes: Record<string, unknown>,
  adopt?: () => StoredDoc<AccountDoc> | undefined,
): { userId: string; accountId: string; writes: DocWrite[] } {
  const existing = svc.state.accountByKey(req.id, key) ?? adopt?.();
  if (!existing) {
    const created = accountWithUser({
      methodId: req.id,
      scopeId: req.method.scope_id,
      type: req.method.type,
      key,
      attributes,
    });
    return { userId: created.userId, accountId: created.accountId, writes: created.writes };
  }
  const writes: DocWrite[] = [];
  if (existing.doc.key !== key || !sameProfile(existing.doc.attributes, attributes)) {
    const now = nowIso();
    writes.push({
      collection: collections.accounts,
      id: existing.id,
      doc: { ...existing.doc, key, attributes, updated_time: now },
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

/**
 * Commits a new token (plus `resolve`'s writes) with its event and renders the login response. `resolve`
 * runs inside the commit under `locks`, so two first logins of one identity cannot create two accounts; the
 * method's and scope's keys are shared, so a racing delete of either sees the login committed or refuses it.
 */
export async function issueAndDeliver(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
  locks: string[],
  resolve: () => { userId: string; accountId: string; writes: DocWrite[] },
): Promise<Response> {
  const { result: minted } = await loginCommit(svc.state.store.transact(locks, () => {
    if (!svc.state.method(req.id)) throw notFound();
    const who = resolve();
    const token = mintToken(svc.settings.tokens, { ...who, methodId: req.id, scopeId: req.method.scope_id });
    return {
      writes: [...who.writes, { collection: collections.tokens, id: token.id, doc: token.doc, ifVersion: 0 }],
      events: [tokenIssuedEvent(token, req.delivery, ctx.clientIp)],
      result: token,
    };
  }, { sharedLocks: loginParentLocks(req.id, req.method) }));
  return deliverToken(svc, ctx, req.command ?? "login", req.typeEcho, req.delivery, minted);
}

/**
 * A login's commit: its account or user writes carry versions, and one changed by a write that does not
 * share the login's locks (a cascade delete) makes the login fail as a login, not as a 500.
 */
export async function loginCommit<T>(commit: Promise<T>): Promise<T> {
  try {
    return await commit;
  } catch (err) {
    if (err instanceof VersionConflictError) throw unableToAuthenticate();
    throw err;
  }
}

/** The shared keys of a login under `methodId` (see parentLocks). */
export function loginParentLocks(methodId: string, method: MethodDoc): string[] {
  return parentLocks([{ auth_method_id: methodId, scope_id: method.scope_id }]);
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

export function deliverToken(
  svc: AuthService,
  ctx: RequestContext,
  command: string,
  typeEcho: string | undefined,
  delivery: "token" | "cookie",
  minted: NewToken,
): Response {
  const attributes = renderToken(
    svc.state,
    minted.id,
    minted.doc,
    delivery === "token" ? minted.token : undefined,
  );
  const body: Record<string, unknown> = { command };
  if (typeEcho) body.type = typeEcho;
  body.attributes = attributes;
  if (delivery !== "cookie") return json(body, 200);
  const headers = new Headers();
  const maxAge = Math.floor((Date.parse(minted.doc.expiration_time) - Date.now()) / 1000);
  for (const c of splitCookies(minted.token, maxAge, cookiesSecure(ctx.url))) {
    headers.append("Set-Cookie", c);
  }
  return json(body, 200, headers);
}
