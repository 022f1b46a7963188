// The console session a completed sign-in starts (password form, OIDC, OIDC's code step): a new session id at
// every sign-in, the pre-login cookies cleared, then the page asked for.

import type { StoredDoc } from "../../lib/store/mod.ts";
import type { UserDoc } from "../registry/core/model.ts";
import { type ConsoleReq, sessionBinding } from "./context.ts";
import { seeOther } from "./layout.ts";
import { cookieHeader, LOGIN_COOKIE, readCookie, SESSION_COOKIE } from "./session.ts";

/** A new session for `user` (a new id at every sign-in), then `next`; `clear`: more cookies to remove. */
export async function startSession(
  c: ConsoleReq,
  user: StoredDoc<UserDoc>,
  next: string,
  clear: string[] = [],
): Promise<Response> {
  const previous = readCookie(c.ctx.request, SESSION_COOKIE);
  const { cookie, session } = await c.env.sessions.create(user.id, sessionBinding(user.doc), previous, {
    flash: `Signed in as ${user.doc.username}.`,
  });
  const headers = new Headers();
  headers.append("Set-Cookie", cookieHeader(SESSION_COOKIE, cookie, c.env.secureCookies));
  for (const name of [LOGIN_COOKIE, ...clear]) {
    headers.append("Set-Cookie", cookieHeader(name, "", c.env.secureCookies, 0));
  }
  return seeOther({ ...c, session }, next, undefined, headers);
}
