// Who is calling: the token sources in spec order (§3), and the permission checks of §5.

import { ApiError } from "../../lib/errors.ts";
import { bearerToken, type RequestContext } from "../../lib/http.ts";
import { notFound } from "./errors.ts";
import { type OrgDoc, type TokenDoc, TOKENS, type UserDoc } from "./model.ts";
import type { Registry } from "./state.ts";

export const TOKEN_HMAC_PURPOSE = "registry.token";

export interface Caller {
  /** A token was presented (valid or not). */
  tokenPresent: boolean;
  tokenHash: string | undefined;
  user: UserDoc | undefined;
  /** Lowercase username of the caller. */
  userKey: string | undefined;
}

/** The caller without a token (shared: callers are never mutated). */
const ANONYMOUS: Caller = Object.freeze({
  tokenPresent: false,
  tokenHash: undefined,
  user: undefined,
  userKey: undefined,
});

/** Everything a registry handler needs. */
export interface Req {
  ctx: RequestContext;
  reg: Registry;
  caller: Caller;
  /** scheme://host[:port] for the absolute URLs the registry emits. */
  origin: string;
  /** The API the route belongs to: 1 for /api/v1 and the root routes, 2 for /api/v2 (spec v2 §2). */
  api: 1 | 2;
}

/** The first present token source wins: Bearer, ?access_token, X-Service-Token, X-Atlas-Token. */
export function presentedToken(ctx: RequestContext): string | undefined {
  const bearer = bearerToken(ctx.request);
  if (bearer !== undefined) return bearer;
  // Parsing the URL costs more than this check: most requests carry no query token (a name spelled with
  // percent-escapes still gets parsed).
  const href = ctx.request.url;
  const query = href.indexOf("?");
  if (query >= 0 && (href.includes("access_token", query) || href.includes("%", query))) {
    const value = ctx.url.searchParams.get("access_token");
    if (value !== null) return value;
  }
  // Lowercase names: Deno lowercases the name of every lookup, and a name already lowercase is not copied.
  return ctx.request.headers.get("x-service-token") ?? ctx.request.headers.get("x-atlas-token") ?? undefined;
}

export function tokenHash(reg: Registry, token: string): string {
  return reg.ctx.data.keys.hmac(TOKEN_HMAC_PURPOSE, token);
}

export function resolveCaller(reg: Registry, ctx: RequestContext): Caller {
  const token = presentedToken(ctx);
  if (token === undefined) return ANONYMOUS;
  const hash = tokenHash(reg, token);
  const stored = reg.store.get<TokenDoc>(TOKENS, hash)?.doc;
  const expired = stored?.expires_at ? Date.parse(stored.expires_at) <= Date.now() : false;
  // A service principal's token acts as its organization while the principal exists (spec v2 §4).
  const principal = stored?.principal;
  const user = !stored || expired
    ? undefined
    : typeof principal === "string"
    ? reg.principals.actingUser(principal)
    : reg.user(stored.username)?.doc;
  if (!user) return { tokenPresent: true, tokenHash: undefined, user: undefined, userKey: undefined };
  reg.tokenUse.set(hash, Date.now());
  return { tokenPresent: true, tokenHash: hash, user, userKey: user.username.toLowerCase() };
}

/** 401 unless a valid token was presented. */
export function requireUser(req: Req): UserDoc {
  if (!req.caller.tokenPresent) throw new ApiError(401, "Authentication required!");
  if (!req.caller.user) throw new ApiError(401, "Bad access token!");
  return req.caller.user;
}

export function requireAdmin(req: Req): UserDoc {
  const user = requireUser(req);
  if (!user.admin) throw new ApiError(403, "Admin privileges required!");
  return user;
}

export function orgRole(org: OrgDoc, userKey: string): "owner" | "member" | undefined {
  return org.members.find((m) => m.username.toLowerCase() === userKey)?.role;
}

/** The caller is the namespace, a member or owner of it, or an admin: may read private and write. */
export function isInsider(reg: Registry, caller: Caller, ownerKey: string): boolean {
  if (!caller.user || !caller.userKey) return false;
  if (caller.user.admin || caller.userKey === ownerKey) return true;
  const org = reg.org(ownerKey)?.doc;
  return org !== undefined && orgRole(org, caller.userKey) !== undefined;
}

/**
 * Write access to namespace `ownerKey`: 401 without a valid token, 404 for a private box the caller
 * cannot see, 403 otherwise when not allowed, 402 while the namespace is delinquent (admins exempt).
 */
export function requireWrite(req: Req, ownerKey: string, privateBox = false): UserDoc {
  const user = requireUser(req);
  if (!isInsider(req.reg, req.caller, ownerKey)) {
    if (privateBox) throw notFound();
    const name = req.reg.namespaceName(ownerKey) ?? ownerKey;
    throw new ApiError(403, `You are not allowed to modify boxes in namespace '${name}'!`);
  }
  requireSolvent(req, ownerKey);
  return user;
}

export function requireSolvent(req: Req, ownerKey: string): void {
  if (req.caller.user?.admin) return;
  if (req.reg.namespaceDelinquent(ownerKey)) {
    const name = req.reg.namespaceName(ownerKey) ?? ownerKey;
    throw new ApiError(402, `Namespace '${name}' is delinquent on billing; writes are disabled!`);
  }
}
