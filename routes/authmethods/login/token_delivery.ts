// A successful login's end: the commit that mints its token under the login's locks, and the response that
// delivers the token (in the body or as split cookies).

import { json, type RequestContext } from "../../../lib/http.ts";
import { type DocWrite, VersionConflictError } from "../../../lib/store/mod.ts";
import { collections, parentLocks } from "../common.ts";
import { notFound } from "../errors.ts";
import type { AuthService } from "../service.ts";
import type { MethodDoc } from "../state.ts";
import {
  cookiesSecure,
  mintToken,
  type NewToken,
  renderToken,
  splitCookies,
  tokenIssuedEvent,
} from "../tokens.ts";
import { type AuthRequest, type CredentialCheck, unableToAuthenticate } from "./login_request.ts";
import { beginAttempt, recordFailure } from "./login_failures.ts";
import type { LoginAttempt } from "../throttle.ts";

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
 * A password or LDAP login end to end: its throttled attempt under `nameKey`, the type's `check`, then the
 * failure's record and answer, or the token's commit and delivery.
 */
export async function credentialLogin(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
  loginName: string,
  nameKey: string,
  check: (attempt: LoginAttempt) => Promise<CredentialCheck>,
): Promise<Response> {
  const attempt = await beginAttempt(svc, ctx, req.id, nameKey, loginName);
  const checked = await check(attempt);
  if (!checked.ok) {
    await recordFailure(svc, ctx, req.id, loginName, checked.reason);
    throw unableToAuthenticate();
  }
  return await issueAndDeliver(svc, ctx, req, checked.locks, checked.resolve);
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
