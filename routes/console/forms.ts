// Form posts: the body (URL-encoded, at most 256 KiB), and the checks every state-changing request passes
// first: not cross-site (Origin / Sec-Fetch-Site) and the session's CSRF token.

import { ApiError } from "../../lib/errors.ts";
import { readBody } from "../../lib/http.ts";
import type { ConsoleReq } from "./context.ts";
import { LOGIN_COOKIE, readCookie } from "./session.ts";

const FORM_LIMIT = 256 * 1024;

export type Form = URLSearchParams;

/** Refuses a request another site made the browser send (403). */
export function refuseCrossSite(c: ConsoleReq): void {
  const headers = c.ctx.request.headers;
  const site = headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") throw csrfError();
  const origin = headers.get("origin");
  if (origin !== null && origin !== c.origin && origin !== c.ctx.url.origin) {
    throw csrfError();
  }
}

function csrfError(): ApiError {
  return new ApiError(
    403,
    "This form was not sent from a wharf page (cross-site request refused). Reload the page and try again.",
  );
}

export async function readForm(c: ConsoleReq): Promise<Form> {
  const type = c.ctx.request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw new ApiError(415, "Forms must be sent as application/x-www-form-urlencoded");
  }
  const bytes = await readBody(c.ctx.request, FORM_LIMIT);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** A signed-in form post: not cross-site, a live session, its CSRF token. Returns the form. */
export async function signedInForm(c: ConsoleReq): Promise<Form> {
  refuseCrossSite(c);
  if (!c.session) throw new ApiError(401, "Your session has ended; sign in again.");
  const form = await readForm(c);
  if (!c.env.sessions.checkCsrf(c.session.csrf, form.get("_csrf") ?? undefined)) throw csrfError();
  return form;
}

/** The login form's post: not cross-site, and the token bound to the pre-login cookie. */
export async function loginForm(c: ConsoleReq): Promise<Form> {
  refuseCrossSite(c);
  const form = await readForm(c);
  const cookie = readCookie(c.ctx.request, LOGIN_COOKIE);
  if (
    !cookie || !c.env.sessions.checkCsrf(c.env.sessions.loginCsrf(cookie), form.get("_csrf") ?? undefined)
  ) {
    throw csrfError();
  }
  return form;
}

/** A trimmed field, or "" when absent. */
export function field(form: Form, name: string): string {
  return (form.get(name) ?? "").trim();
}

/** A checkbox: present means on. */
export function checked(form: Form, name: string): boolean {
  return form.get(name) !== null;
}
