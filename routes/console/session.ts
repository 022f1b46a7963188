// Web console sessions, stored so that every node of a cluster knows them: a random cookie value (only its HMAC
// is kept, as the document's id), idle and absolute expiry, a new id at every sign-in, a CSRF token derived from
// the cookie, the message and once-shown secret of the last form post sealed with the root key, a cap on each
// user's sessions, and the end of a session when its user is deleted or changes password.

import { constantTimeEqual } from "../../lib/crypto.ts";
import { randomSecret } from "../../lib/ids.ts";
import type { DocumentStore, DocWrite, StoredDoc } from "../../lib/store/mod.ts";

export const SESSION_COOKIE = "wharf_session";
/** Before sign-in: binds the login form's CSRF token to this browser. */
export const LOGIN_COOKIE = "wharf_login";
/** The keyring purpose of a sign-in step sealed into a cookie (sealPending). */
const PENDING_PURPOSE = "console.pending-sign-in";
/** Stored with the registry, whose browser front the console is. */
export const SESSIONS = "registry/console_sessions";
/** Sessions one user may hold (WHARF_CONSOLE_MAX_SESSIONS_PER_USER); past it that user's least recent goes. */
export const DEFAULT_MAX_SESSIONS_PER_USER = 100;
/** A session's last use is stored at most this often (its idle expiry is as precise): not a write per page. */
const lastSeenStepMs = 60_000;

/** What a page leaves for the next one (Post/Redirect/Get); sealed in the stored session. */
interface Carried {
  /** A message for the next page. */
  flash?: string;
  /** Errors of the last form post, for the page it returns to. */
  flashErrors?: string[];
  /** A secret shown once on the next page (a new token or client secret). */
  shownOnce?: { label: string; value: string; extra?: Record<string, string> };
}

export interface Session extends Carried {
  key: string;
  /** Lowercase username. */
  userKey: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
}

interface SessionDoc {
  [key: string]: unknown;
  user: string;
  created_at: number;
  last_seen: number;
  /** HMAC of the password hash at sign-in: a changed password ends the session. */
  password: string;
  /** The Carried fields, sealed (absent when there is nothing to carry). */
  carried?: string;
}

export interface SessionTimes {
  idleMs: number;
  absoluteMs: number;
}

/** The keyring operations sessions use (lib/crypto.ts Keyring). */
export interface SessionKeys {
  hmac(purpose: string, value: string): string;
  seal(purpose: string, plaintext: string, aad: string): string;
  open(purpose: string, sealed: string, aad: string): string;
}

export class Sessions {
  readonly #store: DocumentStore;
  readonly #keys: SessionKeys;
  readonly times: SessionTimes;
  readonly maxPerUser: number;
  /** What each looked-up session carried and when it was last stored: save() writes only what changed. */
  readonly #loaded = new WeakMap<Session, { carried: string; lastSeen: number }>();

  constructor(
    store: DocumentStore,
    keys: SessionKeys,
    times: SessionTimes,
    maxPerUser = DEFAULT_MAX_SESSIONS_PER_USER,
  ) {
    this.#store = store;
    this.#keys = keys;
    this.times = times;
    this.maxPerUser = maxPerUser;
  }

  /**
   * A new stored session (the caller sends its cookie); `previous` (the cookie the browser had) ends, and so do
   * the user's least recently used sessions beyond `maxPerUser` (never another user's: one account signing in
   * again and again cannot sign anyone else out).
   */
  async create(
    userKey: string,
    passwordHash: string,
    previous?: string,
    carried: Carried = {},
  ): Promise<{ cookie: string; session: Session }> {
    const cookie = randomSecret(32);
    const now = Date.now();
    const session: Session = {
      key: this.#hmac(cookie),
      userKey,
      csrf: this.#csrf(cookie),
      createdAt: now,
      lastSeen: now,
      ...carried,
    };
    const ended = previous ? this.#hmac(previous) : undefined;
    // The user's lock: two sign-ins of one user (on any node) count that user's sessions one after the other.
    const locks = [lockOf(session.key), userLockOf(userKey), ...(ended ? [lockOf(ended)] : [])];
    await this.#store.transact(locks, () => {
      const writes: DocWrite[] = [{
        collection: SESSIONS,
        id: session.key,
        doc: this.#doc(session, passwordHash),
      }];
      if (ended && this.#store.get(SESSIONS, ended)) {
        writes.push({ collection: SESSIONS, id: ended, doc: null });
      }
      for (const id of this.#beyondUserLimit(userKey, ended)) {
        writes.push({ collection: SESSIONS, id, doc: null });
      }
      return { writes };
    });
    this.#loaded.set(session, { carried: carriedText(session), lastSeen: now });
    return { cookie, session };
  }

  /** The live session of a cookie value, or undefined. */
  lookup(cookie: string | undefined): Session | undefined {
    if (!cookie) return undefined;
    const key = this.#hmac(cookie);
    const stored = this.#store.get<SessionDoc>(SESSIONS, key);
    if (!stored) return undefined;
    const now = Date.now();
    if (this.#expired(stored.doc, now)) return undefined;
    let carried: Carried = {};
    if (stored.doc.carried) {
      try {
        carried = JSON.parse(this.#keys.open("console.session", stored.doc.carried, aadOf(key)));
      } catch {
        carried = {};
      }
    }
    const session: Session = {
      key,
      userKey: stored.doc.user,
      csrf: this.#csrf(cookie),
      createdAt: stored.doc.created_at,
      lastSeen: stored.doc.last_seen,
      ...carried,
    };
    this.#loaded.set(session, { carried: carriedText(session), lastSeen: stored.doc.last_seen });
    session.lastSeen = now;
    return session;
  }

  /** Whether the session was signed in with `passwordHash` (the user's password has not changed since). */
  signedInWith(session: Session, passwordHash: string): boolean {
    const stored = this.#store.get<SessionDoc>(SESSIONS, session.key);
    return stored !== undefined && constantTimeEqual(stored.doc.password, this.#password(passwordHash));
  }

  /**
   * Stores what a request changed in its session (the message or secret for the next page, its last use once a
   * step has passed) before the answer goes out, so the next request finds it on any node. A session ended
   * meanwhile stays ended.
   */
  async save(session: Session): Promise<void> {
    const loaded = this.#loaded.get(session);
    const carried = carriedText(session);
    const due = !loaded ||
      session.lastSeen - loaded.lastSeen >= Math.min(lastSeenStepMs, this.times.idleMs / 10);
    if (loaded && carried === loaded.carried && !due) return;
    await this.#store.transact([lockOf(session.key)], () => {
      const stored = this.#store.get<SessionDoc>(SESSIONS, session.key);
      if (!stored) return { writes: [] };
      const doc = { ...this.#doc(session, undefined), password: stored.doc.password };
      return { writes: [{ collection: SESSIONS, id: session.key, doc }] };
    });
    this.#loaded.set(session, { carried, lastSeen: session.lastSeen });
  }

  /** Ends a session (sign-out, a changed password): on every node. */
  async end(session: Session): Promise<void> {
    await this.#remove([session.key]);
  }

  /**
   * Seals `value` for a cookie of the browser whose pre-login cookie is `loginCookie` (AES-GCM, bound to it),
   * valid `ttlMs`: a sign-in step between two requests, with nothing stored.
   */
  sealPending(loginCookie: string, value: unknown, ttlMs: number): string {
    const text = JSON.stringify({ value, expiresAt: Date.now() + ttlMs });
    return this.#keys.seal(PENDING_PURPOSE, text, `pending:${loginCookie}`).replaceAll(
      /[+/=]/g,
      (c) => c === "+" ? "-" : c === "/" ? "_" : "~",
    );
  }

  /** What sealPending sealed for this `loginCookie`: undefined when absent, tampered with, another's or expired. */
  openPending<T>(loginCookie: string, sealed: string | undefined): T | undefined {
    if (!sealed || sealed.length > 8192) return undefined;
    try {
      const raw = sealed.replaceAll(/[-_~]/g, (c) => c === "-" ? "+" : c === "_" ? "/" : "=");
      const opened = JSON.parse(this.#keys.open(PENDING_PURPOSE, raw, `pending:${loginCookie}`));
      return typeof opened.expiresAt === "number" && opened.expiresAt > Date.now()
        ? opened.value as T
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** The CSRF token of the login form for a pre-login cookie value. */
  loginCsrf(loginCookie: string): string {
    return this.#keys.hmac("console.session", `login-csrf:${loginCookie}`);
  }

  checkCsrf(expected: string, given: string | undefined): boolean {
    return given !== undefined && given.length === expected.length && constantTimeEqual(expected, given);
  }

  /** Deletes expired sessions, 100 per commit (every few minutes on every node; one gone already is skipped). */
  async sweep(): Promise<void> {
    const now = Date.now();
    const expired = [...this.#store.list<SessionDoc>(SESSIONS)].filter((s) => this.#expired(s.doc, now));
    for (let i = 0; i < expired.length; i += 100) {
      await this.#remove(expired.slice(i, i + 100).map((s) => s.id));
    }
  }

  async #remove(keys: string[]): Promise<void> {
    await this.#store.transact(keys.map(lockOf), () => ({
      writes: keys.filter((key) => this.#store.get(SESSIONS, key)).map((id) => ({
        collection: SESSIONS,
        id,
        doc: null,
      })),
    }));
  }

  #expired(doc: SessionDoc, now: number): boolean {
    return now - doc.last_seen > this.times.idleMs || now - doc.created_at > this.times.absoluteMs;
  }

  /** The user's sessions that go to make room for a new one: the least recently used beyond the cap. */
  #beyondUserLimit(userKey: string, ended: string | undefined): string[] {
    const own: StoredDoc<SessionDoc>[] = [];
    for (const s of this.#store.list<SessionDoc>(SESSIONS)) {
      if (s.doc.user === userKey && s.id !== ended) own.push(s);
    }
    const excess = own.length + 1 - this.maxPerUser;
    if (excess <= 0) return [];
    own.sort((a, b) => a.doc.last_seen - b.doc.last_seen || a.doc.created_at - b.doc.created_at);
    return own.slice(0, excess).map((s) => s.id);
  }

  #doc(session: Session, passwordHash: string | undefined): SessionDoc {
    const carried = carriedText(session);
    return {
      user: session.userKey,
      created_at: session.createdAt,
      last_seen: session.lastSeen,
      password: passwordHash === undefined ? "" : this.#password(passwordHash),
      ...(carried === "{}"
        ? {}
        : { carried: this.#keys.seal("console.session", carried, aadOf(session.key)) }),
    };
  }

  #hmac(cookie: string): string {
    return this.#keys.hmac("console.session", cookie);
  }

  #csrf(cookie: string): string {
    return this.#keys.hmac("console.session", `csrf:${cookie}`);
  }

  #password(hash: string): string {
    return this.#keys.hmac("console.session", `password:${hash}`);
  }
}

function carriedText(session: Session): string {
  const carried: Carried = {};
  if (session.flash !== undefined) carried.flash = session.flash;
  if (session.flashErrors !== undefined) carried.flashErrors = session.flashErrors;
  if (session.shownOnce !== undefined) carried.shownOnce = session.shownOnce;
  return JSON.stringify(carried);
}

function lockOf(key: string): string {
  return `${SESSIONS}/${key}`;
}

function userLockOf(userKey: string): string {
  return `${SESSIONS}/user:${userKey}`;
}

function aadOf(key: string): string {
  return `${SESSIONS}/${key}/carried`;
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
