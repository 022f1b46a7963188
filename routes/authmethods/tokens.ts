// Auth tokens: the at_<id>_s1<secret> format, issuing (hashed at rest), rendering, split-cookie delivery,
// and resolving the caller from a bearer header or the two cookies.

import { constantTimeEqual, sha256Hex } from "../../lib/crypto.ts";
import { prefixedId } from "../../lib/ids.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import { collections, lockKeys, nowMs, omitZero, parentLocks } from "./common.ts";
import {
  type ActorCaller,
  type AuthState,
  type ScopeDoc,
  tokenDeletedEvent,
  type TokenDoc,
  type UserDoc,
} from "./state.ts";

export const jsCookie = "wt-js-token-cookie";
export const httpCookie = "wt-http-token-cookie";

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** 58^4: the largest power of 58 whose remainder times 2^16, plus a 16-bit word, stays an exact double. */
const base58Chunk = 58 ** 4;

/**
 * Bitcoin-alphabet base58 of `bytes` read as one big-endian number, one "1" per leading zero byte. Long
 * division of 16-bit words by 58^4 (four digits per pass) rather than BigInt: same output, a few times faster.
 */
export function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const words: number[] = [];
  let i = bytes.length % 2;
  if (i) words.push(bytes[0]!);
  for (; i < bytes.length; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!);
  const digits: string[] = [];
  let start = 0;
  while (start < words.length) {
    let rem = 0;
    for (let k = start; k < words.length; k++) {
      const cur = rem * 65536 + words[k]!;
      const q = Math.floor(cur / base58Chunk);
      rem = cur - q * base58Chunk;
      words[k] = q;
    }
    while (start < words.length && words[start] === 0) start++;
    // Four digits per pass, except that the most significant pass stops at its leading zeros.
    for (let d = 0; d < 4 && (start < words.length || rem > 0); d++) {
      digits.push(base58Alphabet[rem % 58]!);
      rem = Math.floor(rem / 58);
    }
  }
  return "1".repeat(zeros) + digits.reverse().join("");
}

export interface TokenSettings {
  ttlMs: number;
  staleMs: number;
}

export interface NewToken {
  id: string;
  token: string;
  doc: TokenDoc;
}

/** A fresh token document and its secret; the caller commits the doc. */
export function mintToken(
  settings: TokenSettings,
  who: { userId: string; accountId: string; methodId: string; scopeId: string },
): NewToken {
  const id = prefixedId("at");
  const token = `${id}_s1${base58(crypto.getRandomValues(new Uint8Array(32)))}`;
  const nowMsValue = nowMs();
  const now = new Date(nowMsValue).toISOString();
  const doc: TokenDoc = {
    hash: sha256Hex(token),
    user_id: who.userId,
    account_id: who.accountId,
    auth_method_id: who.methodId,
    scope_id: who.scopeId,
    created_time: now,
    updated_time: now,
    approximate_last_used_time: now,
    // From the same millisecond value: no parse of the string just rendered.
    expiration_time: new Date(nowMsValue + settings.ttlMs).toISOString(),
  };
  return { id, token, doc };
}

export function tokenIssuedEvent(t: NewToken, delivery: string, clientIp: string): EventInput {
  return {
    Topic: "AuthToken",
    Type: "AuthTokenIssued",
    Key: t.id,
    Payload: {
      AuthToken: {
        id: t.id,
        user_id: t.doc.user_id,
        account_id: t.doc.account_id,
        auth_method_id: t.doc.auth_method_id,
        delivery,
        client_ip: clientIp,
      },
    },
  };
}

export function renderScopeRef(id: string, scope: ScopeDoc | undefined): Record<string, unknown> {
  return omitZero({
    id,
    type: scope?.type ?? (id === "global" ? "global" : "org"),
    name: scope?.name,
    description: scope?.description,
    parent_scope_id: scope?.parent_scope_id,
  });
}

/** The token record's attributes (`token` only when given). */
export function renderToken(
  state: AuthState,
  id: string,
  doc: TokenDoc,
  token?: string,
): Record<string, unknown> {
  const scope = state.scope(doc.scope_id)?.doc;
  return omitZero({
    id,
    scope_id: doc.scope_id,
    scope: renderScopeRef(doc.scope_id, scope),
    token,
    user_id: doc.user_id,
    auth_method_id: doc.auth_method_id,
    account_id: doc.account_id,
    created_time: doc.created_time,
    updated_time: doc.updated_time,
    approximate_last_used_time: doc.approximate_last_used_time,
    expiration_time: doc.expiration_time,
    authorized_actions: ["read:self", "delete:self"],
  });
}

/** Set-Cookie values splitting `token` between a script-readable and an HttpOnly cookie. */
export function splitCookies(token: string, maxAgeSeconds: number, secure: boolean): string[] {
  const half = Math.floor(token.length / 2);
  const flags = `Path=/; SameSite=Strict${secure ? "; Secure" : ""}; Max-Age=${Math.max(0, maxAgeSeconds)}`;
  return [
    `${jsCookie}=${token.slice(0, half)}; ${flags}`,
    `${httpCookie}=${token.slice(half)}; HttpOnly; ${flags}`,
  ];
}

/** Secure is left out only for plain HTTP on a loopback address (local development). */
export function cookiesSecure(url: URL): boolean {
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) ||
    url.hostname.startsWith("127.");
  return !(url.protocol === "http:" && loopback);
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** The presented token: Authorization Bearer, else both cookies joined. */
export function presentedToken(request: Request): string | undefined {
  const auth = request.headers.get("Authorization");
  const m = auth ? /^\s*bearer\s+(\S+)\s*$/i.exec(auth) : null;
  if (m) return m[1];
  const cookies = request.headers.get("Cookie");
  if (!cookies) return undefined;
  const js = cookieValue(cookies, jsCookie);
  const http = cookieValue(cookies, httpCookie);
  return js && http ? js + http : undefined;
}

const tokenPattern = /^(at_[0-9A-Za-z]{10})_s1[1-9A-HJ-NP-Za-km-z]{20,60}$/;

export class CallerResolver {
  readonly #state: AuthState;
  readonly #settings: TokenSettings;
  /** In-memory last use; written to the token document at most once a minute. */
  #lastUse = new Map<string, number>();

  constructor(state: AuthState, settings: TokenSettings) {
    this.#state = state;
    this.#settings = settings;
  }

  /** A bad, unknown, expired or idle token makes the caller anonymous. */
  resolve(request: Request): ActorCaller {
    const token = presentedToken(request);
    if (!token) return { kind: "anonymous" };
    const m = tokenPattern.exec(token);
    if (!m) return { kind: "anonymous" };
    const id = m[1]!;
    const stored = this.#state.get<TokenDoc>(collections.tokens, id);
    if (!stored || !constantTimeEqual(stored.doc.hash, sha256Hex(token))) return { kind: "anonymous" };
    const now = Date.now();
    const lastUse = Math.max(this.#lastUse.get(id) ?? 0, Date.parse(stored.doc.approximate_last_used_time));
    if (now >= Date.parse(stored.doc.expiration_time) || now - lastUse > this.#settings.staleMs) {
      return { kind: "anonymous" };
    }
    const user = this.#state.get<UserDoc>(collections.users, stored.doc.user_id);
    if (!user) return { kind: "anonymous" };
    this.#touch(id, now, Date.parse(stored.doc.approximate_last_used_time));
    return { kind: "user", userId: user.id, tokenId: id, admin: user.doc.admin === true };
  }

  /** Tokens past their lifetime or idle timeout: nothing can use them any more. */
  deadTokens(now = Date.now()): Array<{ id: string; doc: TokenDoc }> {
    const dead: Array<{ id: string; doc: TokenDoc }> = [];
    for (const t of this.#state.list<TokenDoc>(collections.tokens)) {
      const lastUse = Math.max(this.#lastUse.get(t.id) ?? 0, Date.parse(t.doc.approximate_last_used_time));
      if (now >= Date.parse(t.doc.expiration_time) || now - lastUse > this.#settings.staleMs) {
        dead.push({ id: t.id, doc: t.doc });
      }
    }
    return dead;
  }

  /** Deletes dead tokens (up to `limit` per commit) so the collection does not grow without bound. */
  async sweep(limit = 1000): Promise<number> {
    const dead = this.deadTokens().slice(0, limit);
    if (!dead.length) return 0;
    const store = this.#state.store;
    await store.transact(dead.map((t) => lockKeys.token(t.id)), () => {
      const live = dead.filter((t) => store.get(collections.tokens, t.id));
      const now = new Date(nowMs()).toISOString();
      return {
        writes: live.flatMap((t) => [
          { collection: collections.tokens, id: t.id, doc: null },
          this.#state.tokenTombstone(t.id, t.doc, now),
        ]),
        events: live.map((t) => tokenDeletedEvent(t.id, t.doc, "expired")),
      };
    }, { sharedLocks: parentLocks(dead.map((t) => t.doc)) });
    for (const t of dead) this.#lastUse.delete(t.id);
    return dead.length;
  }

  #touch(id: string, now: number, persisted: number): void {
    this.#lastUse.set(id, now);
    if (now - persisted < 60_000) return;
    const store = this.#state.store;
    store.transact([`${collections.tokens}/${id}`], () => {
      const cur = store.get<TokenDoc>(collections.tokens, id);
      if (!cur || now - Date.parse(cur.doc.approximate_last_used_time) < 60_000) return {};
      const doc = { ...cur.doc, approximate_last_used_time: new Date(now).toISOString() };
      return { writes: [{ collection: collections.tokens, id, doc, ifVersion: cur.version }] };
    }).catch(() => {});
  }
}
