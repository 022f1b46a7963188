// Durable OIDC login attempts in the document store, so a restart mid-login loses nothing
// (docs/auth-methods.md#oidc, docs/storage.md#oidc-login-attempts).

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { DocWrite, EventInput, StoredDoc } from "../../lib/store/mod.ts";
import { SealedDocs } from "../../lib/store/sealed_docs.ts";
import { collections, lockKeys, parentLocks } from "./common.ts";
import { holdsAccount, tokenDeletedEvent, type TokenDoc, tokenTombstone } from "./state.ts";
import type { NewToken } from "./tokens.ts";

/*
 * Design. Each attempt is one document in `auth/oidc_attempts`, committed through `store.transact` (durable
 * before `start` answers), rather than Boundary's sealed `state` parameter: the parameter would still need a
 * durable "state used" record for single use and a durable pending token, and it cannot bound a flood of
 * `start` calls. A document also keeps the provider's URL short whatever the round-trip payload.
 *
 * Nothing secret is stored in plaintext, in the documents or in the log's Docs:
 * - the document id is HMAC(token_id) and `state_hash` is HMAC(state) (lookups only need the hashes);
 * - the nonce, the PKCE code verifier and the round-trip payload are one AES-256-GCM sealed value (AAD: the
 *   attempt id), and a minted but uncollected token's secret is sealed too (AAD: attempt id + token id).
 * Attempt commits carry no events: the event stream sees only the token's own events, as before.
 * The HMACs, sealing and lock keys are lib/store/sealed_docs.ts's, shared with Nomad's pending SSO logins; the
 * sweep is this module's own, because it also deletes the tokens nobody collected.
 *
 * Life of an attempt: `started` (state open) → `redeeming` (the callback consumed the state, durably, before
 * it talks to the provider: a replayed callback fails even across a restart) → `ready` (token minted in the
 * same commit; a registry console sign-in mints none: its account and user are recorded instead) or `failed`
 * → deleted when `token` (or the console) collects it, or by the sweep once expired (its uncollected token
 * with it). A crash during the code exchange leaves it `redeeming`: polls answer 202 until it expires.
 */
export const attemptsCollection = "auth/oidc_attempts";

const hmacPurpose = "auth.oidc-attempt";
const sealPurpose = "auth.oidc-attempt-secrets";
/** Open attempts are kept until they expire; this bounds what a flood of `start` calls can take. */
export const maxOpenAttempts = 50_000;
/** Expired attempts deleted per commit by the sweep. */
const sweepBatch = 1000;

export type AttemptStatus = "started" | "redeeming" | "ready" | "failed";

export interface AttemptDoc {
  [k: string]: unknown;
  auth_method_id: string;
  status: AttemptStatus;
  /** HMAC of the `state` parameter while the callback may still use it. */
  state_hash?: string;
  created_time: string;
  expiration_time: string;
  delivery: "token" | "cookie";
  type_echo?: string;
  /** A registry console sign-in (secrets.complete_path): collected only by the console, never by `token`. */
  console?: true;
  /** Sealed JSON of AttemptSecrets. */
  secrets: string;
  /** Once ready: the minted auth token's id and its sealed secret, until collected. */
  token_id?: string;
  token?: string;
}

export interface AttemptSecrets {
  nonce: string;
  code_verifier: string;
  roundtrip_payload?: unknown;
  /** A registry console sign-in: the path under the method's api_url_prefix the callback ends at. */
  complete_path?: string;
  /** With complete_path: the cookie by which the browser that started the attempt keeps its token id. */
  binding_cookie?: string;
  /** Once ready: what a registry sign-in reads of the claims (preferred_username, email_verified "false"). */
  profile?: Record<string, string>;
  /** Once ready, a registry console sign-in (no token minted): the account the login resolved and its user. */
  signed_in?: SignedIn;
}

/** The auth-method account and user a console sign-in's login resolved. */
export interface SignedIn {
  user_id: string;
  account_id: string;
}

/** An attempt as the callback redeemed it: the version it wrote and the opened secrets. */
export interface RedeemedAttempt {
  id: string;
  version: number;
  doc: AttemptDoc;
  secrets: AttemptSecrets;
}

export type Collected =
  | { status: "pending" }
  | { status: "failed" }
  | {
    status: "ready";
    token: NewToken;
    delivery: "token" | "cookie";
    typeEcho: string | undefined;
  }
  | { status: "signed-in"; signedIn: SignedIn; profile: Record<string, string> }
  | { status: "gone" };

const unknownMessage = "Unknown or expired authentication attempt.";
const unknownAttempt = () => new ApiError(400, unknownMessage);

/** The attempt expired and was swept while its callback talked to the provider: the callback fails as a login. */
export class AttemptExpiredError extends ApiError {
  constructor() {
    super(400, unknownMessage);
  }
}

const busy = () => new ApiError(503, "Server is busy, retry later.");

function expired(doc: AttemptDoc, now: number): boolean {
  return Date.parse(doc.expiration_time) <= now;
}

export class OidcAttempts {
  readonly ttlMs: number;
  readonly #app: AppContext;
  readonly #docs: SealedDocs<AttemptDoc>;
  /** HMAC(state) → attempt id, for attempts whose state is still open; kept current by a watch. */
  readonly #byState = new Map<string, string>();
  /** Attempts whose create commit is under way (counted against the cap). */
  #creating = 0;
  #sweeping: Promise<number> | undefined;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #unwatch: () => void;

  constructor(app: AppContext, ttlMs: number) {
    this.#app = app;
    this.ttlMs = ttlMs;
    this.#docs = new SealedDocs<AttemptDoc>(app.data, {
      collection: attemptsCollection,
      hmacPurpose,
      sealPurpose,
      expiresAt: (doc) => Date.parse(doc.expiration_time),
    });
    for (const a of this.#store.list<AttemptDoc>(attemptsCollection)) {
      if (a.doc.state_hash) this.#byState.set(a.doc.state_hash, a.id);
    }
    this.#unwatch = this.#store.watch(attemptsCollection, (c) => {
      const prev = (c.previous?.doc as AttemptDoc | undefined)?.state_hash;
      const cur = (c.current?.doc as AttemptDoc | undefined)?.state_hash;
      if (prev && prev !== cur && this.#byState.get(prev) === c.id) this.#byState.delete(prev);
      if (cur) this.#byState.set(cur, c.id);
    });
    this.#timer = setInterval(() => this.sweep().catch(() => {}), Math.min(30_000, Math.max(250, ttlMs / 4)));
  }

  close(): void {
    clearInterval(this.#timer);
    this.#unwatch();
  }

  get #store() {
    return this.#app.data.store;
  }

  /** Attempts held (any status) plus those being created: what the cap counts. */
  get openCount(): number {
    return this.#store.count(attemptsCollection) + this.#creating;
  }

  /** 503 when another attempt would pass the cap. */
  assertRoom(): void {
    if (this.openCount >= maxOpenAttempts) throw busy();
  }

  #id(tokenId: string): string {
    return this.#docs.hmacOf(`token_id:${tokenId}`);
  }

  #stateHash(state: string): string {
    return this.#docs.hmacOf(`state:${state}`);
  }

  #lock(id: string): string {
    return this.#docs.lockOf(id);
  }

  /** Commits a new attempt; resolves once it is durable. */
  async create(input: {
    tokenId: string;
    state: string;
    methodId: string;
    secrets: AttemptSecrets;
    delivery: "token" | "cookie";
    typeEcho: string | undefined;
  }): Promise<void> {
    this.assertRoom();
    const id = this.#id(input.tokenId);
    const now = Date.now();
    const doc: AttemptDoc = {
      auth_method_id: input.methodId,
      status: "started",
      state_hash: this.#stateHash(input.state),
      created_time: new Date(now).toISOString(),
      expiration_time: new Date(now + this.ttlMs).toISOString(),
      delivery: input.delivery,
      ...(input.typeEcho ? { type_echo: input.typeEcho } : {}),
      ...(input.secrets.complete_path ? { console: true as const } : {}),
      secrets: this.#docs.seal(JSON.stringify(input.secrets), id),
    };
    this.#creating++;
    try {
      await this.#store.transact([this.#lock(id)], () => ({
        writes: [{ collection: attemptsCollection, id, doc, ifVersion: 0 }],
      }));
    } finally {
      this.#creating--;
    }
  }

  /**
   * Consumes `state` durably (single use) and returns the attempt with its secrets opened. Unknown, used or
   * expired state, or an attempt of another method than `methodId`, is 400 and consumes nothing.
   */
  async redeem(state: string, methodId: string | undefined): Promise<RedeemedAttempt> {
    const stateHash = this.#stateHash(state);
    const id = this.#byState.get(stateHash);
    if (!id) throw unknownAttempt();
    const { result } = await this.#store.transact([this.#lock(id)], () => {
      const cur = this.#store.get<AttemptDoc>(attemptsCollection, id);
      if (
        !cur || cur.doc.status !== "started" || cur.doc.state_hash !== stateHash ||
        expired(cur.doc, Date.now()) ||
        (methodId !== undefined && cur.doc.auth_method_id !== methodId)
      ) {
        throw unknownAttempt();
      }
      const { state_hash: _used, ...rest } = cur.doc;
      const doc: AttemptDoc = { ...rest, status: "redeeming" };
      const opened = this.#docs.open(cur.doc.secrets, id);
      if (opened === undefined) throw unknownAttempt();
      const secrets = JSON.parse(opened) as AttemptSecrets;
      return {
        writes: [{ collection: attemptsCollection, id, doc, ifVersion: cur.version }],
        result: { id, version: cur.version + 1, doc, secrets },
      };
    });
    return result;
  }

  /** Whether `tokenId` is the token id of `attempt` (the browser presenting it started the attempt). */
  isTokenOf(attempt: RedeemedAttempt, tokenId: string | undefined): boolean {
    return tokenId !== undefined && tokenId !== "" && this.#id(tokenId) === attempt.id;
  }

  /** The lock a commit that completes `attempt` takes. */
  lockOf(attempt: RedeemedAttempt): string {
    return this.#lock(attempt.id);
  }

  /**
   * For the minting commit (run under lockOf(attempt)): the write that makes the attempt ready with `token`
   * sealed. 400 when the attempt expired and was swept during the code exchange (no token nobody can collect).
   */
  readyWrite(attempt: RedeemedAttempt, token: NewToken): DocWrite {
    const cur = this.#current(attempt);
    const doc: AttemptDoc = {
      ...cur.doc,
      status: "ready",
      token_id: token.id,
      token: this.#docs.seal(token.token, `${attempt.id}:${token.id}`),
    };
    return { collection: attemptsCollection, id: attempt.id, doc, ifVersion: cur.version };
  }

  /**
   * For a registry console sign-in's login commit (run under lockOf(attempt)): the write that makes the attempt
   * ready with the account and user the login resolved and what the registry reads of the claims, all sealed;
   * no token is minted (the registry signs the person in). 400 as readyWrite.
   */
  signedInWrite(attempt: RedeemedAttempt, signedIn: SignedIn, profile: Record<string, string>): DocWrite {
    const cur = this.#current(attempt);
    const secrets = this.#docs.seal(
      JSON.stringify({ ...attempt.secrets, profile, signed_in: signedIn }),
      attempt.id,
    );
    const doc: AttemptDoc = { ...cur.doc, secrets, status: "ready" };
    return { collection: attemptsCollection, id: attempt.id, doc, ifVersion: cur.version };
  }

  #current(attempt: RedeemedAttempt): StoredDoc<AttemptDoc> {
    const cur = this.#store.get<AttemptDoc>(attemptsCollection, attempt.id);
    if (!cur || cur.version !== attempt.version) throw new AttemptExpiredError();
    return cur;
  }

  /** Records a failed callback, so the next `token` poll answers 401. */
  async fail(attempt: RedeemedAttempt): Promise<void> {
    await this.#store.transact([this.#lock(attempt.id)], () => {
      const cur = this.#store.get<AttemptDoc>(attemptsCollection, attempt.id);
      if (!cur || cur.version !== attempt.version) return {};
      const doc: AttemptDoc = { ...cur.doc, status: "failed" };
      return { writes: [{ collection: attemptsCollection, id: attempt.id, doc, ifVersion: cur.version }] };
    });
  }

  /**
   * The `token` command (`by` "api") or the console's completion ("console"): undefined for an unknown,
   * expired, collected or other method's attempt, or one the other flow started (an attempt started through the
   * API and completed by someone's browser never becomes a console session); pending while the browser step
   * runs; otherwise the attempt is deleted (durably, before the token is handed out, so it is collected exactly
   * once even across a crash) and its outcome returned.
   */
  async collect(tokenId: string, methodId: string, by: "api" | "console"): Promise<Collected | undefined> {
    const id = this.#id(tokenId);
    const usable = (a: StoredDoc<AttemptDoc> | undefined): a is StoredDoc<AttemptDoc> =>
      a !== undefined && a.doc.auth_method_id === methodId && !expired(a.doc, Date.now()) &&
      (a.doc.console === true) === (by === "console");
    const seen = this.#store.get<AttemptDoc>(attemptsCollection, id);
    if (!usable(seen)) return undefined;
    if (seen.doc.status === "started" || seen.doc.status === "redeeming") return { status: "pending" };
    const { result } = await this.#store.transact([this.#lock(id)], () => {
      const cur = this.#store.get<AttemptDoc>(attemptsCollection, id);
      if (!usable(cur)) return { result: undefined };
      if (cur.doc.status === "started" || cur.doc.status === "redeeming") {
        return { result: { status: "pending" } as Collected };
      }
      const writes: DocWrite[] = [{ collection: attemptsCollection, id, doc: null, ifVersion: cur.version }];
      if (cur.doc.status === "failed") return { writes, result: { status: "failed" } as Collected };
      if (cur.doc.console) return { writes, result: this.#signedInOf(id, cur.doc) };
      if (!cur.doc.token_id || !cur.doc.token) return { writes, result: { status: "failed" } as Collected };
      const stored = this.#store.get<TokenDoc>(collections.tokens, cur.doc.token_id);
      if (!stored) return { writes, result: { status: "gone" } as Collected };
      const secret = this.#docs.open(cur.doc.token, `${id}:${cur.doc.token_id}`);
      if (secret === undefined) return { writes, result: { status: "gone" } as Collected };
      return {
        writes,
        result: {
          status: "ready",
          token: { id: stored.id, token: secret, doc: stored.doc },
          delivery: cur.doc.delivery,
          typeEcho: cur.doc.type_echo,
        } as Collected,
      };
    });
    return result;
  }

  /** A ready console attempt's outcome: gone when its account was deleted or moved to another user since. */
  #signedInOf(id: string, doc: AttemptDoc): Collected {
    const opened = this.#docs.open(doc.secrets, id);
    const secrets = opened === undefined ? undefined : JSON.parse(opened) as AttemptSecrets;
    const signedIn = secrets?.signed_in;
    if (!signedIn) return { status: "failed" };
    if (!holdsAccount(this.#store, signedIn.user_id, signedIn.account_id)) return { status: "gone" };
    return { status: "signed-in", signedIn, profile: secrets.profile ?? {} };
  }

  /** Deletes expired attempts (and the tokens nobody collected); one run at a time. */
  sweep(now = Date.now()): Promise<number> {
    this.#sweeping ??= this.#sweepAll(now).finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepAll(now: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await this.#sweepBatch(now);
      removed += n.removed;
      if (n.listed < sweepBatch || n.removed === 0) return removed;
    }
  }

  async #sweepBatch(now: number): Promise<{ listed: number; removed: number }> {
    const dead: StoredDoc<AttemptDoc>[] = [];
    for (const a of this.#store.list<AttemptDoc>(attemptsCollection)) {
      if (expired(a.doc, now)) dead.push(a);
      if (dead.length >= sweepBatch) break;
    }
    if (!dead.length) return { listed: 0, removed: 0 };
    const store = this.#store;
    const tokens = new Map<string, TokenDoc>();
    for (const a of dead) {
      const t = a.doc.token_id ? store.get<TokenDoc>(collections.tokens, a.doc.token_id) : undefined;
      if (t) tokens.set(t.id, t.doc);
    }
    // The locks every token deleter takes: a logout or cascade that got there first leaves nothing to delete
    // (and no second AuthTokenDeleted event).
    const locks = [...dead.map((a) => this.#lock(a.id)), ...[...tokens.keys()].map(lockKeys.token)];
    const { result } = await store.transact(locks, () => {
      const writes: DocWrite[] = [];
      const events: EventInput[] = [];
      let removed = 0;
      for (const a of dead) {
        const cur = store.get<AttemptDoc>(attemptsCollection, a.id);
        if (!cur || !expired(cur.doc, now)) continue;
        const tokenId = cur.doc.token_id;
        // Minted after the listing: its token's locks are not held; the next sweep takes it.
        if (tokenId && !tokens.has(tokenId) && store.get(collections.tokens, tokenId)) continue;
        writes.push({ collection: attemptsCollection, id: a.id, doc: null });
        removed++;
        const t = tokenId ? store.get<TokenDoc>(collections.tokens, tokenId) : undefined;
        if (t) {
          // With its tombstone, so auth-token list refreshes name it in removed_ids.
          writes.push({ collection: collections.tokens, id: t.id, doc: null });
          writes.push(tokenTombstone(t.id, t.doc, new Date(now).toISOString()));
          events.push(tokenDeletedEvent(t.id, t.doc, "uncollected"));
        }
      }
      return { writes, events, result: removed };
    }, { sharedLocks: parentLocks(tokens.values()) });
    return { listed: dead.length, removed: result };
  }
}
