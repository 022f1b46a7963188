// Service principals (docs/registry.md#service-principals-for-ci): an organization's client id and secret for
// CI pipelines, managed by admins and the organization's owners. The secret is shown once and kept only as an
// HMAC; its tokens live beside users'.

import { constantTimeEqual } from "../../../lib/crypto.ts";
import type { Counters, DocChange, DocWrite, StoredDoc } from "../../../lib/store/mod.ts";
import { plainUserDoc, type TokenDoc, TOKENS, type UserDoc } from "./model.ts";
import type { RegistryState } from "./state.ts";

export const PRINCIPALS = "registry/principals";
const SECRET_HMAC_PURPOSE = "registry.sp-secret";
/** Compared against when the client id is unknown, so that both answers take the same work. */
const UNKNOWN_SECRET_HASH = "0".repeat(64);
/** Principals an organization may have. */
export const MAX_PER_ORG = 100;
/** Live tokens a principal may hold; past it the oldest go (a pipeline asks for one per run). */
export const MAX_TOKENS_PER_PRINCIPAL = 1000;

export interface PrincipalDoc {
  [key: string]: unknown;
  client_id: string;
  name: string;
  /** Lowercase key of the organization. */
  org: string;
  /** Hex HMAC-SHA256 of the client secret under the root key's `registry.sp-secret` key. */
  secret_hash: string;
  created_by: string;
  created_at: string;
}

/** A token minted for a principal: acts for `username` (the organization) while the principal exists. */
export interface PrincipalTokenDoc extends TokenDoc {
  principal: string;
}

/** The principals' in-memory side: their tokens by client id and when each was last used. */
export class Principals {
  readonly #reg: RegistryState;
  readonly lastUsed: Counters;
  /** client id → hashes of its tokens (kept by watching the token collection). */
  readonly #tokens = new Map<string, Set<string>>();
  readonly #unwatch: () => void;

  constructor(reg: RegistryState, lastUsed: Counters) {
    this.#reg = reg;
    this.lastUsed = lastUsed;
    for (const t of reg.store.list<TokenDoc>(TOKENS)) this.#index(t, +1);
    this.#unwatch = reg.store.watch(TOKENS, (change: DocChange) => {
      if (change.previous) this.#index(change.previous as StoredDoc<TokenDoc>, -1);
      if (change.current) this.#index(change.current as StoredDoc<TokenDoc>, +1);
    });
  }

  close(): void {
    this.#unwatch();
  }

  #index(token: StoredDoc<TokenDoc>, delta: 1 | -1): void {
    const owner = token.doc.principal;
    if (typeof owner !== "string") return;
    let set = this.#tokens.get(owner);
    if (delta > 0) {
      if (!set) this.#tokens.set(owner, set = new Set());
      set.add(token.id);
    } else if (set) {
      set.delete(token.id);
      if (set.size === 0) this.#tokens.delete(owner);
    }
  }

  get(clientId: string): StoredDoc<PrincipalDoc> | undefined {
    return this.#reg.store.get<PrincipalDoc>(PRINCIPALS, clientId);
  }

  ofOrg(orgKey: string): PrincipalDoc[] {
    return [...this.#reg.store.list<PrincipalDoc>(PRINCIPALS)].map((p) => p.doc).filter((p) =>
      p.org === orgKey
    );
  }

  /** The principal when `secret` is its client secret (the same work whether or not the id exists). */
  verify(clientId: string, secret: string): PrincipalDoc | undefined {
    const principal = this.get(clientId)?.doc;
    const hash = this.#reg.ctx.data.keys.hmac(SECRET_HMAC_PURPOSE, secret);
    const matches = constantTimeEqual(hash, principal?.secret_hash ?? UNKNOWN_SECRET_HASH);
    return matches && principal && this.#reg.org(principal.org) ? principal : undefined;
  }

  /**
   * Who a principal's token acts as: its organization, as a user that is no admin and whose own namespace is
   * the organization (so it writes there only and reads what a member reads). Undefined once principal or
   * organization is gone.
   */
  actingUser(clientId: string): UserDoc | undefined {
    const principal = this.get(clientId)?.doc;
    const org = principal ? this.#reg.org(principal.org)?.doc : undefined;
    if (!org) return undefined;
    this.lastUsed.set(clientId, Date.now());
    const fields = {
      username: org.name,
      email: null,
      password_hash: "",
      admin: false,
      delinquent: org.delinquent,
    };
    return plainUserDoc(fields, principal!.created_at);
  }

  /** Deletes of every token of the principal, or only the expired ones and the oldest past the cap. */
  tokenRemovals(clientId: string, options: { expiredOnly?: boolean } = {}): DocWrite[] {
    const hashes = [...this.#tokens.get(clientId) ?? []];
    if (!options.expiredOnly) return hashes.map((id) => ({ collection: TOKENS, id, doc: null }));
    const time = Date.now();
    const live: StoredDoc<TokenDoc>[] = [];
    const writes: DocWrite[] = [];
    for (const id of hashes) {
      const t = this.#reg.store.get<TokenDoc>(TOKENS, id);
      if (!t) continue;
      if (t.doc.expires_at && Date.parse(t.doc.expires_at) <= time) {
        writes.push({ collection: TOKENS, id, doc: null });
      } else live.push(t);
    }
    live.sort((a, b) => a.index - b.index);
    for (const t of live.slice(0, Math.max(0, live.length - MAX_TOKENS_PER_PRINCIPAL + 1))) {
      writes.push({ collection: TOKENS, id: t.id, doc: null });
    }
    return writes;
  }

  /** Writes removing every principal of an organization and their tokens (the organization is deleted). */
  orgRemovals(orgKey: string): DocWrite[] {
    return this.ofOrg(orgKey).flatMap((p) => [
      ...this.tokenRemovals(p.client_id),
      { collection: PRINCIPALS, id: p.client_id, doc: null },
    ]);
  }

  /** Forgets the usage counters of removed tokens and principals (after their commit). */
  forget(writes: DocWrite[]): void {
    for (const w of writes) {
      if (w.doc !== null) continue;
      if (w.collection === TOKENS) this.#reg.tokenUse.delete(w.id);
      if (w.collection === PRINCIPALS) this.lastUsed.delete(w.id);
    }
  }

  newSecretHash(secret: string): string {
    return this.#reg.ctx.data.keys.hmac(SECRET_HMAC_PURPOSE, secret);
  }
}
