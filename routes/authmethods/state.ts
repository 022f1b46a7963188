// The auth family's documents (scopes, methods, accounts, users, tokens, tombstones), their in-memory
// lookups, and secret handling (sealing at rest, HMACs for display).

import { createHmac, hkdfSync } from "node:crypto";
import { Buffer } from "node:buffer";
import type { AppContext } from "../../lib/app.ts";
import type { DocChange, DocumentStore, DocWrite, EventInput, StoredDoc } from "../../lib/store/mod.ts";
import { ChangeLog } from "./change_log.ts";
import { type Attrs, collections, type MethodType, resourceEvent } from "./common.ts";
import { type ManagedGroupDoc, MembershipIndex } from "./memberships.ts";

export type { ManagedGroupDoc } from "./memberships.ts";

export interface ScopeDoc {
  [k: string]: unknown;
  type: "global" | "org";
  name?: string;
  description?: string;
  parent_scope_id?: string;
  primary_auth_method_id?: string;
  created_time: string;
  updated_time: string;
}

export interface MethodDoc {
  [k: string]: unknown;
  scope_id: string;
  type: MethodType;
  name?: string;
  description?: string;
  attributes: Attrs;
  /** Sealed secrets by attribute name (AES-GCM, AAD = method id + field). */
  secrets: Record<string, string>;
  /** Display HMACs of the secrets by attribute name. */
  hmacs: Record<string, string>;
  created_time: string;
  updated_time: string;
}

export interface AccountDoc {
  [k: string]: unknown;
  auth_method_id: string;
  scope_id: string;
  type: MethodType;
  name?: string;
  description?: string;
  attributes: Attrs;
  /** Lookup key within the method: login name (password), the entry's DN as the directory returns it (LDAP), issuer + sub (OIDC). */
  key: string;
  password_hash?: string;
  /** OIDC accounts: the oidc managed groups whose filter matched at the account's last login. */
  managed_group_ids?: string[];
  user_id: string;
  created_time: string;
  updated_time: string;
}

/**
 * Whether account `accountId` still exists and belongs to user `userId`: a console OIDC sign-in stands only
 * while it does, when the console collects the attempt and at each request of its two-factor code step.
 */
export function holdsAccount(store: Pick<DocumentStore, "get">, userId: string, accountId: string): boolean {
  return store.get<AccountDoc>(collections.accounts, accountId)?.doc.user_id === userId;
}

export interface UserDoc {
  [k: string]: unknown;
  scope_id: string;
  name?: string;
  description?: string;
  account_ids: string[];
  primary_account_id: string;
  login_name?: string;
  full_name?: string;
  email?: string;
  admin?: boolean;
  created_time: string;
  updated_time: string;
}

export interface TokenDoc {
  [k: string]: unknown;
  hash: string;
  user_id: string;
  account_id: string;
  auth_method_id: string;
  scope_id: string;
  created_time: string;
  updated_time: string;
  approximate_last_used_time: string;
  expiration_time: string;
}

export interface TombstoneDoc {
  [k: string]: unknown;
  resource: string;
  scope_id: string;
  /** For accounts: the method they belonged to (list queries are per method). */
  parent_id?: string;
  deleted_time: string;
}

export type ActorCaller = { kind: "anonymous" } | {
  kind: "user";
  userId: string;
  tokenId: string;
  admin: boolean;
};

export const sealPurpose = "auth.method-secrets";
export const tombstoneTtlMs = 30 * 86_400_000;
/** A cached listing more changes behind than this is rebuilt rather than patched change by change. */
const maxPatchedChanges = 4096;

/** Full initial-phase listings by query and caller (lists/listing.ts), valid while the generation is unchanged. */
export interface ListSnapshot {
  generation: number;
  /** Entries keyed time + NUL + id, newest first. */
  sorted: { key: string; item: Record<string, unknown> }[];
  /** id → key of its entry in `sorted`. */
  keys: Map<string, string>;
  estimate: number;
}
/** Each service keeps its own cache (several servers may share a process in tests). */
export type ListCache = Map<string, ListSnapshot>;

export class AuthState {
  readonly app: AppContext;
  #accountByKey = new Map<string, string>();
  #methodNames = new Map<string, string>();
  #unsubscribe: Array<() => void> = [];
  readonly listCache: ListCache = new Map();
  /** Managed groups by method, and their members (memberships.ts). */
  readonly memberships: MembershipIndex;
  /** Counts changes to the listed collections and to tokens: the auth-token list's cache generation. */
  #tokenListGeneration = 0;
  /** Changes to the listed collections (not tokens), for patching cached listings and for list refreshes. */
  #changes: ChangeLog;

  constructor(app: AppContext) {
    this.app = app;
    this.memberships = new MembershipIndex((id) => this.managedGroup(id)?.doc);
    for (const a of this.list<AccountDoc>(collections.accounts)) {
      this.#accountByKey.set(accountKey(a.doc), a.id);
      this.memberships.accountChanged(a.id, undefined, a.doc);
    }
    for (const g of this.list<ManagedGroupDoc>(collections.managedGroups)) {
      this.memberships.groupChanged(g.id, undefined, g.doc);
    }
    for (const m of this.list<MethodDoc>(collections.methods)) {
      if (m.doc.name) this.#methodNames.set(nameKey(m.doc), m.id);
    }
    const watched = [
      collections.accounts,
      collections.methods,
      collections.tombstones,
      collections.scopes,
      collections.users,
      collections.managedGroups,
    ];
    this.#changes = new ChangeLog(
      watched.flatMap((c) => [...this.list(c)].map((d) => ({ index: d.index, collection: c, id: d.id }))),
      app.data.log.lastIndex,
      (c, id) => this.get(c, id) !== undefined,
      () => watched.reduce((n, c) => n + this.store.count(c), 0),
    );
    const watch = (c: string, fn: (change: DocChange) => void) => {
      this.#unsubscribe.push(app.data.store.watch(c, (change) => {
        this.#changes.record(c, change.id, change.index);
        this.#tokenListGeneration++;
        fn(change);
      }));
    };
    watch(collections.accounts, (c) => {
      const prev = c.previous?.doc as AccountDoc | undefined;
      const cur = c.current?.doc as AccountDoc | undefined;
      if (prev && this.#accountByKey.get(accountKey(prev)) === c.id) {
        this.#accountByKey.delete(accountKey(prev));
      }
      if (cur) this.#accountByKey.set(accountKey(cur), c.id);
      this.memberships.accountChanged(c.id, prev, cur);
    });
    watch(collections.managedGroups, (c) => {
      this.memberships.groupChanged(
        c.id,
        c.previous?.doc as ManagedGroupDoc | undefined,
        c.current?.doc as ManagedGroupDoc | undefined,
      );
    });
    this.#unsubscribe.push(app.data.store.watch(collections.tokens, () => this.#tokenListGeneration++));
    watch(collections.methods, (c) => {
      const prev = c.previous?.doc as MethodDoc | undefined;
      const cur = c.current?.doc as MethodDoc | undefined;
      if (prev?.name && this.#methodNames.get(nameKey(prev)) === c.id) {
        this.#methodNames.delete(nameKey(prev));
      }
      if (cur?.name) this.#methodNames.set(nameKey(cur), c.id);
    });
    for (const c of [collections.tombstones, collections.scopes, collections.users]) watch(c, () => {});
  }

  /** Bumped by every change to a listed collection: cached listings are valid while it holds. */
  get generation(): number {
    return this.#changes.generation;
  }

  /** Bumped by every change to a listed collection or a token: cached auth-token listings hold while it does. */
  get tokenListGeneration(): number {
    return this.#tokenListGeneration;
  }

  /** The highest commit index applied to the listed collections: every later write has a higher one. */
  get appliedIndex(): number {
    return this.#changes.lastIndex;
  }

  /** Methods whose last write has a log index above `afterIndex`; deleted ones are left out. */
  *methodsWrittenAfter(afterIndex: number): Generator<StoredDoc<MethodDoc>> {
    for (const id of this.#changes.idsWrittenAfter(collections.methods, afterIndex)) {
      const m = this.method(id);
      if (m && m.index > afterIndex) yield m;
    }
  }

  /** Tombstones (of any resource) written after log index `afterIndex`. */
  *tombstonesWrittenAfter(afterIndex: number): Generator<StoredDoc<TombstoneDoc>> {
    for (const id of this.#changes.idsWrittenAfter(collections.tombstones, afterIndex)) {
      const t = this.get<TombstoneDoc>(collections.tombstones, id);
      if (t && t.index > afterIndex) yield t;
    }
  }

  close(): void {
    for (const u of this.#unsubscribe) u();
    this.listCache.clear();
  }

  /**
   * Method ids changed after generation `since`; undefined when that history is gone, too long to be worth
   * patching, or a scope changed (scopes are part of every rendered method). Other collections do not affect
   * method listings.
   */
  methodChangesSince(since: number): string[] | undefined {
    const changes = this.#changes.changesAfter(since, maxPatchedChanges);
    if (!changes || changes.some((c) => c.collection === collections.scopes)) return undefined;
    return changes.filter((c) => c.collection === collections.methods).map((c) => c.id);
  }

  /** The id of the method named `name` in `scopeId`, if any. */
  methodNamed(scopeId: string, name: string): string | undefined {
    return this.#methodNames.get(`${scopeId}\u0000${name}`);
  }

  get store() {
    return this.app.data.store;
  }

  get<T>(collection: string, id: string): StoredDoc<T> | undefined {
    return this.store.get<T>(collection, id);
  }

  list<T>(collection: string): IterableIterator<StoredDoc<T>> {
    return this.store.list<T>(collection);
  }

  scope(id: string) {
    return this.get<ScopeDoc>(collections.scopes, id);
  }

  method(id: string) {
    return this.get<MethodDoc>(collections.methods, id);
  }

  managedGroup(id: string) {
    return this.get<ManagedGroupDoc>(collections.managedGroups, id);
  }

  /** The ids of the managed groups any of `accountIds` is a member of, sorted (unknown ids are skipped). */
  managedGroupIdsOfAccounts(accountIds: Iterable<string>): string[] {
    const out = new Set<string>();
    for (const id of accountIds) {
      const account = this.get<AccountDoc>(collections.accounts, id);
      if (account) { for (const g of this.memberships.groupIdsOfAccount(account.doc)) out.add(g); }
    }
    return [...out].sort();
  }

  accountByKey(methodId: string, key: string): StoredDoc<AccountDoc> | undefined {
    const id = this.#accountByKey.get(`${methodId}\u0000${key}`);
    return id ? this.get<AccountDoc>(collections.accounts, id) : undefined;
  }

  accountsOfMethod(methodId: string): StoredDoc<AccountDoc>[] {
    return [...this.list<AccountDoc>(collections.accounts)].filter((a) => a.doc.auth_method_id === methodId);
  }

  tokensOfUser(userId: string): StoredDoc<TokenDoc>[] {
    return [...this.list<TokenDoc>(collections.tokens)].filter((t) => t.doc.user_id === userId);
  }

  adminCount(): number {
    let n = 0;
    for (const u of this.list<UserDoc>(collections.users)) if (u.doc.admin) n++;
    return n;
  }

  /** Seals a secret for one record and field. */
  seal(recordId: string, field: string, plaintext: string): string {
    return this.app.data.keys.seal(sealPurpose, plaintext, `${recordId}:${field}`);
  }

  open(recordId: string, field: string, sealed: string): string {
    return this.app.data.keys.open(sealPurpose, sealed, `${recordId}:${field}`);
  }

  /** base64url(HMAC-SHA256(HKDF(server key, salt = method id, info = scope id), secret)). */
  secretHmac(methodId: string, scopeId: string, secret: string): string {
    const key = hkdfSync("sha256", this.app.data.keys.key("auth.secret-hmac"), methodId, scopeId, 32);
    return createHmac("sha256", Buffer.from(key)).update(secret).digest("base64url");
  }

  /** The method's attributes with its secrets opened: what the LDAP/OIDC clients need. */
  openAttributes(id: string, doc: MethodDoc): Attrs {
    const out: Attrs = { ...doc.attributes };
    for (const [field, sealed] of Object.entries(doc.secrets)) out[field] = this.open(id, field, sealed);
    return out;
  }

  /** Writes and events that delete a user's tokens (logout of every session), with `reason`. */
  revokeTokens(
    tokens: StoredDoc<TokenDoc>[],
    reason: string,
    now: string,
  ): { writes: DocWrite[]; events: EventInput[] } {
    const writes: DocWrite[] = [];
    const events: EventInput[] = [];
    for (const t of tokens) {
      writes.push({ collection: collections.tokens, id: t.id, doc: null });
      writes.push(this.tokenTombstone(t.id, t.doc, now));
      events.push(tokenDeletedEvent(t.id, t.doc, reason));
    }
    return { writes, events };
  }

  /** A deleted token's tombstone: auth-token list refreshes answer it in removed_ids. */
  tokenTombstone(id: string, doc: TokenDoc, now: string): DocWrite {
    return tokenTombstone(id, doc, now);
  }

  tombstone(id: string, resource: string, scopeId: string, now: string, parentId?: string): DocWrite {
    return tombstoneWrite(id, resource, scopeId, now, parentId);
  }

  /** Tombstones older than 30 days are no longer needed by any valid list token (at start and every sweep). */
  async pruneTombstones(): Promise<void> {
    const cutoff = Date.now() - tombstoneTtlMs;
    const old = [...this.list<TombstoneDoc>(collections.tombstones)].filter((t) =>
      Date.parse(t.doc.deleted_time) < cutoff
    );
    if (!old.length) return;
    await this.store.transact([], () => ({
      // Bounded per commit; the rest go at the next sweep.
      writes: old.slice(0, 10_000).map((t) => ({ collection: collections.tombstones, id: t.id, doc: null })),
    }));
  }
}

function nameKey(m: MethodDoc): string {
  return `${m.scope_id}\u0000${m.name}`;
}

function accountKey(a: AccountDoc): string {
  return `${a.auth_method_id}\u0000${a.key}`;
}

/** A deleted resource's tombstone (list refreshes answer it in removed_ids until it is pruned). */
function tombstoneWrite(
  id: string,
  resource: string,
  scopeId: string,
  now: string,
  parentId?: string,
): DocWrite {
  const doc: TombstoneDoc = {
    resource,
    scope_id: scopeId,
    deleted_time: now,
    ...(parentId ? { parent_id: parentId } : {}),
  };
  return { collection: collections.tombstones, id, doc };
}

/** A deleted token's tombstone, for every path that deletes a token (logout, cascades, sweeps). */
export function tokenTombstone(id: string, doc: TokenDoc, now: string): DocWrite {
  return tombstoneWrite(id, "auth-token", doc.scope_id, now, doc.user_id);
}

export function tokenDeletedEvent(id: string, t: TokenDoc, reason: string): EventInput {
  return {
    Topic: "AuthToken",
    Type: "AuthTokenDeleted",
    Key: id,
    Payload: { AuthToken: { id, user_id: t.user_id, auth_method_id: t.auth_method_id, reason } },
  };
}

export function methodEvent(
  type: string,
  id: string,
  doc: MethodDoc,
  version: number,
  actor: ActorCaller,
  extra: Record<string, unknown> = {},
): EventInput {
  return resourceEvent(
    "AuthMethod",
    type,
    { id, scope_id: doc.scope_id, type: doc.type, version },
    actor,
    extra,
  );
}
