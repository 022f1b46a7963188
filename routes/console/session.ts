// Web console sessions: a random cookie value (only its HMAC is kept, in memory), idle and absolute expiry,
// a new id at every sign-in, a CSRF token per session, and the end of a session when its user is deleted or
// changes password. Sessions do not survive a restart (users sign in again).

import { constantTimeEqual } from "../../lib/crypto.ts";
import { randomSecret } from "../../lib/ids.ts";

export const SESSION_COOKIE = "wharf_session";
/** Before sign-in: binds the login form's CSRF token to this browser. */
export const LOGIN_COOKIE = "wharf_login";
const MAX_SESSIONS = 100_000;

export interface Session {
  key: string;
  /** Lowercase username. */
  userKey: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
  /** The password hash at sign-in: a changed password ends the session. */
  passwordHash: string;
  /** A message for the next page (Post/Redirect/Get). */
  flash?: string;
  /** Errors of the last form post, for the page it returns to. */
  flashErrors?: string[];
  /** A secret shown once on the next page (a new token or client secret). */
  shownOnce?: { label: string; value: string; extra?: Record<string, string> };
}

export interface SessionTimes {
  idleMs: number;
  absoluteMs: number;
}

export class Sessions {
  readonly #byKey = new Map<string, Session>();
  readonly #hmac: (value: string) => string;
  readonly times: SessionTimes;

  constructor(hmac: (value: string) => string, times: SessionTimes) {
    this.#hmac = hmac;
    this.times = times;
  }

  /** A new session (the caller sends its cookie); `previous` (the cookie the browser had) ends. */
  create(userKey: string, passwordHash: string, previous?: string): { cookie: string; session: Session } {
    if (previous) this.destroy(previous);
    if (this.#byKey.size >= MAX_SESSIONS) this.#sweep(true);
    const cookie = randomSecret(32);
    const now = Date.now();
    const session: Session = {
      key: this.#hmac(cookie),
      userKey,
      csrf: randomSecret(32),
      createdAt: now,
      lastSeen: now,
      passwordHash,
    };
    this.#byKey.set(session.key, session);
    return { cookie, session };
  }

  /** The live session of a cookie value (its idle time restarts), or undefined. */
  lookup(cookie: string | undefined): Session | undefined {
    if (!cookie) return undefined;
    const key = this.#hmac(cookie);
    const session = this.#byKey.get(key);
    if (!session) return undefined;
    const now = Date.now();
    if (now - session.lastSeen > this.times.idleMs || now - session.createdAt > this.times.absoluteMs) {
      this.#byKey.delete(key);
      return undefined;
    }
    session.lastSeen = now;
    return session;
  }

  destroy(cookie: string): void {
    this.#byKey.delete(this.#hmac(cookie));
  }

  end(session: Session): void {
    this.#byKey.delete(session.key);
  }

  /** Ends every session of a user (password change, deletion). */
  endAllOf(userKey: string): void {
    for (const [k, s] of this.#byKey) if (s.userKey === userKey) this.#byKey.delete(k);
  }

  /** The CSRF token of the login form for a pre-login cookie value. */
  loginCsrf(loginCookie: string): string {
    return this.#hmac(`login-csrf:${loginCookie}`);
  }

  checkCsrf(expected: string, given: string | undefined): boolean {
    return given !== undefined && given.length === expected.length && constantTimeEqual(expected, given);
  }

  #sweep(evictOldest: boolean): void {
    const now = Date.now();
    for (const [k, s] of this.#byKey) {
      if (now - s.lastSeen > this.times.idleMs || now - s.createdAt > this.times.absoluteMs) {
        this.#byKey.delete(k);
      }
    }
    if (evictOldest && this.#byKey.size >= MAX_SESSIONS) {
      const oldest = this.#byKey.keys().next().value;
      if (oldest !== undefined) this.#byKey.delete(oldest);
    }
  }

  /** Drops expired sessions (called every few minutes). */
  sweep(): void {
    this.#sweep(false);
  }
}

/** One cookie's value from a Cookie header. */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure behind HTTPS; maxAge 0 clears it. */
export function cookieHeader(name: string, value: string, secure: boolean, maxAgeSeconds?: number): string {
  let out = `${name}=${value}; Path=/; HttpOnly; SameSite=Lax`;
  if (secure) out += "; Secure";
  if (maxAgeSeconds !== undefined) out += `; Max-Age=${maxAgeSeconds}`;
  return out;
}
