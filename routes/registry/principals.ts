// Service principals (spec v2 §4): an organization's client id and secret for CI pipelines, managed by admins
// and the organization's owners. The secret is shown once and kept only as an HMAC; its tokens live beside
// users'.

import { json } from "../../lib/http.ts";
import { constantTimeEqual } from "../../lib/crypto.ts";
import { prefixedId, randomSecret } from "../../lib/ids.ts";
import type { Counters, DocChange, DocWrite, StoredDoc } from "../../lib/store/mod.ts";
import type { Req } from "./auth.ts";
import { requireOrgManager } from "./admin_orgs.ts";
import { FieldErrors, readPayload } from "./body.ts";
import { notFound, unprocessable } from "./errors.ts";
import { now, type TokenDoc, TOKENS, type UserDoc } from "./model.ts";
import type { Registry } from "./state.ts";
import { registryLock } from "./locks.ts";

export const PRINCIPALS = "registry/principals";
const SECRET_HMAC_PURPOSE = "registry.sp-secret";
/** Compared against when the client id is unknown, so that both answers take the same work. */
const UNKNOWN_SECRET_HASH = "0".repeat(64);
const MAX_PER_ORG = 100;
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
  readonly #reg: Registry;
  readonly lastUsed: Counters;
  /** client id → hashes of its tokens (kept by watching the token collection). */
  readonly #tokens = new Map<string, Set<string>>();
  readonly #unwatch: () => void;

  constructor(reg: Registry, lastUsed: Counters) {
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
    return {
      username: org.name,
      email: null,
      password_hash: "",
      mobile: null,
      admin: false,
      two_factor_enabled: false,
      totp_secret: null,
      totp_pending: null,
      totp_last_step: 0,
      profile: null,
      delinquent: org.delinquent,
      created_at: principal!.created_at,
      updated_at: principal!.created_at,
    };
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

function render(reg: Registry, p: PrincipalDoc) {
  const used = reg.principals.lastUsed.get(p.client_id);
  return {
    name: p.name,
    client_id: p.client_id,
    created_at: p.created_at,
    last_used_at: used ? new Date(used).toISOString() : null,
  };
}

/** POST /api/v1/admin/organizations/:name/service-principals → 201 with the secret, shown this once. */
export async function createPrincipal(req: Req): Promise<Response> {
  const body = await readPayload(req, "service_principal");
  const actor = req.caller.user;
  const org = requireOrgManager(req, "service principals");
  const errors = new FieldErrors();
  const name = errors.required(body, "name", "Name", 255)?.trim();
  errors.throwIfAny();
  const reg = req.reg;
  const clientSecret = `wharf_sp_${randomSecret(32)}`;
  const doc: PrincipalDoc = {
    client_id: prefixedId("sp", 24),
    name: name!,
    org: org.id,
    secret_hash: reg.principals.newSecretHash(clientSecret),
    created_by: actor!.username,
    created_at: now(),
  };
  // The organization's key: its principals' names are unique and counted (the org's deletion is global).
  await reg.writeIn([registryLock.namespace(org.id)], () => {
    if (!reg.org(org.id)) throw notFound();
    const siblings = reg.principals.ofOrg(org.id);
    if (siblings.some((p) => p.name.toLowerCase() === doc.name.toLowerCase())) {
      throw unprocessable(["Name has already been taken"]);
    }
    if (siblings.length >= MAX_PER_ORG) {
      throw unprocessable([`An organization has at most ${MAX_PER_ORG} service principals`]);
    }
    return { writes: [{ collection: PRINCIPALS, id: doc.client_id, doc, ifVersion: 0 }] };
  });
  return json(
    { name: doc.name, client_id: doc.client_id, client_secret: clientSecret, created_at: doc.created_at },
    201,
    { "Cache-Control": "no-store" },
  );
}

/** GET …/service-principals: the organization's principals, oldest first, without secrets. */
export function listPrincipals(req: Req): Response {
  const org = requireOrgManager(req, "service principals");
  const list = req.reg.principals.ofOrg(org.id).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return json({ service_principals: list.map((p) => render(req.reg, p)) });
}

/** DELETE …/service-principals/:client_id → 204; the principal's tokens are revoked in the same commit. */
export async function deletePrincipal(req: Req): Promise<Response> {
  const org = requireOrgManager(req, "service principals");
  const reg = req.reg;
  const clientId = req.ctx.params.client_id ?? "";
  const writes = await reg.writeIn([registryLock.namespace(org.id)], () => {
    const principal = reg.principals.get(clientId);
    if (!principal || principal.doc.org !== org.id) throw notFound();
    const writes: DocWrite[] = [
      ...reg.principals.tokenRemovals(clientId),
      { collection: PRINCIPALS, id: clientId, doc: null },
    ];
    return { writes, result: writes };
  });
  reg.principals.forget(writes);
  return new Response(null, { status: 204 });
}
