// What every console handler gets (the registry, the viewer, the session) and the bridge to the registry: the
// console calls the registry's services with the signed-in user as caller (`actor`), so every permission,
// visibility and validation rule is the API's.

import { ApiError } from "../../lib/errors.ts";
import { baseUrl, type RequestContext } from "../../lib/http.ts";
import { type Caller, userCaller } from "../registry/core/caller.ts";
import type { Actor, Registry } from "../registry/core/registry.ts";
import type { Uploads } from "../registry/services/uploads.ts";
import type { UserDoc } from "../registry/core/model.ts";
import { readCookie, type Session, SESSION_COOKIE, type Sessions } from "./session.ts";
import type { CodeSteps } from "./code_steps.ts";
import { seg } from "./html.ts";

export interface ConsoleEnv {
  reg: Registry;
  uploads: Uploads;
  sessions: Sessions;
  /** The two-factor code steps waiting for their code (each used once). */
  codeSteps: CodeSteps;
  /** Cookies get Secure (WHARF_PUBLIC_URL is https). */
  secureCookies: boolean;
}

export interface ConsoleReq {
  ctx: RequestContext;
  env: ConsoleEnv;
  reg: Registry;
  origin: string;
  session: Session | undefined;
  user: UserDoc | undefined;
  caller: Caller;
  /** Pages link and publish with API v2's URLs. */
  api: 2;
}

const ANONYMOUS: Caller = Object.freeze({
  tokenPresent: false,
  tokenHash: undefined,
  user: undefined,
  userKey: undefined,
});

/**
 * What a console session is bound to: the user's password, and the person (auth-method user) the registry user
 * is linked to (docs/identity.md), so a session ends when the user's password changes, or when the registry
 * user is unlinked, linked to someone else, or deleted and provisioned again for another person.
 */
export function sessionBinding(user: UserDoc): string {
  const person = user.identity?.user_id;
  return person ? `${user.password_hash}\u0000identity:${person}` : user.password_hash;
}

/** The viewer of a request: the session's user while the session lives and the user still exists unchanged. */
export function sessionViewer(env: ConsoleEnv, ctx: RequestContext): { session?: Session; caller: Caller } {
  const session = env.sessions.lookup(readCookie(ctx.request, SESSION_COOKIE));
  if (!session) return { caller: ANONYMOUS };
  const user = env.reg.user(session.userKey)?.doc;
  if (!user || !env.sessions.signedInWith(session, sessionBinding(user))) {
    env.sessions.end(session).catch(() => {});
    return { caller: ANONYMOUS };
  }
  return { session, caller: userCaller(env.reg, user, undefined) };
}

export function consoleReq(env: ConsoleEnv, ctx: RequestContext): ConsoleReq {
  const { session, caller } = sessionViewer(env, ctx);
  const origin = baseUrl(ctx, env.reg.settings.publicUrl, env.reg.settings.trustProxy);
  return { ctx, env, reg: env.reg, origin, session, user: caller.user, caller, api: 2 };
}

/** The viewer as the caller of a registry service (503 during maintenance unless an admin, as the API). */
export function actor(c: ConsoleReq): Actor {
  if (c.reg.maintenanceEnabled() && !c.user?.admin) throw maintenance();
  return c;
}

export function maintenance(): ApiError {
  return new ApiError(503, "wharf is down for maintenance; try again later", {
    headers: { "Retry-After": "60" },
  });
}

/** The messages of a registry error (422s carry one per problem). */
export function errorMessages(err: ApiError): string[] {
  const list = err.details?.errors;
  return Array.isArray(list) ? list.map(String) : [err.message];
}

/** The admin pages' gate: 401 without a session, 403 for a user who is not an administrator. */
export function requireAdminViewer(c: ConsoleReq): void {
  if (!c.user) throw new ApiError(401, "Sign in first.");
  if (!c.user.admin) throw new ApiError(403, "Admin privileges required!");
}

/** The organization page of the request's `:org`. */
export function orgHref(c: ConsoleReq): string {
  return `/ui/orgs/${seg(c.ctx.params.org ?? "")}`;
}
