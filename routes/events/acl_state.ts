// The live ACL state: tokens by secret HMAC, parsed policies, compiled ACLs per caller, change notices.

import type { AppContext } from "../../lib/app.ts";
import type { DocChange, StoredDoc } from "../../lib/store/mod.ts";
import type { RequestContext } from "../../lib/http.ts";
import { ApiError } from "../../lib/errors.ts";
import type { Acl, AclCaller } from "./acl_types.ts";
import { requestSecret } from "./caller.ts";
import { allowAllAcl, denyAllAcl } from "./policy_acl.ts";
import {
  policyCollection,
  type RoleLink,
  type StoredPolicy,
  type StoredToken,
  tokenCollection,
} from "./acl_model.ts";
import { roleCollection, type StoredRole } from "./acl_role_model.ts";
import { TableIndexes } from "./table_indexes.ts";

/** The policy language (parser, RulesJSON, merge): supplied by the policy module. */
export interface PolicyEngine {
  /** Parses HCL or JSON rules; throws an Error whose message is the reason a client sees. */
  parse(rules: string): unknown;
  rulesJson(parsed: unknown): unknown;
  compile(policies: readonly unknown[]): Acl;
}

/** What changed in the ACL state at a commit: a token (by accessor), or any policy or role. */
export type AclChange = { kind: "token"; accessorId: string; index: number } | {
  kind: "policy" | "role";
  index: number;
};

export const tokenHmacPurpose = "events.acl-token-secret";
export const tokenSealPurpose = "events.acl-token-seal";

export const permissionDenied = () => new ApiError(403, "Permission denied");

/** Longest presented secret whose HMAC is memoized: longer ones cannot be a secret wharf issued. */
const maxMemoizedSecretLength = 128;

export class AclState {
  readonly enabled: boolean;
  readonly #ctx: AppContext;
  readonly #engine: PolicyEngine;
  #parsed = new Map<string, unknown>();
  #byHmac = new Map<string, string>();
  #compiled = new Map<string, Acl>();
  #listeners = new Set<(change: AclChange) => void>();
  readonly #tables = new TableIndexes();
  #hmacCache = new Map<string, string>();
  #roleIdByName = new Map<string, string>();
  #unwatch: Array<() => void> = [];

  constructor(ctx: AppContext, enabled: boolean, engine: PolicyEngine) {
    this.#ctx = ctx;
    this.enabled = enabled;
    this.#engine = engine;
    const { store } = ctx.data;
    for (const t of store.list<StoredToken>(tokenCollection)) this.#indexToken(t, undefined);
    for (const p of store.list<StoredPolicy>(policyCollection)) this.#indexPolicy(p.doc);
    for (const r of store.list<StoredRole>(roleCollection)) this.#indexRole(r, undefined);
    this.#unwatch.push(store.watch(tokenCollection, (c) => this.#onTokenChange(c)));
    this.#unwatch.push(store.watch(policyCollection, (c) => this.#onPolicyChange(c)));
    this.#unwatch.push(store.watch(roleCollection, (c) => this.#onRoleChange(c)));
  }

  close(): void {
    for (const u of this.#unwatch) u();
    this.#listeners.clear();
  }

  get engine(): PolicyEngine {
    return this.#engine;
  }

  /** Highest commit Index seen for a collection (X-Nomad-Index of reads). */
  tableIndex(collection: string): number {
    return this.#tables.of(collection);
  }

  /** Listens to token and policy changes (called synchronously at commit); returns unsubscribe. */
  onChange(listener: (change: AclChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  parsedPolicy(name: string): unknown {
    return this.#parsed.get(name);
  }

  tokenBySecret(secret: string): StoredToken | undefined {
    const accessor = this.#byHmac.get(this.#secretHmac(secret));
    return accessor ? this.#ctx.data.store.get<StoredToken>(tokenCollection, accessor)?.doc : undefined;
  }

  tokenByAccessor(accessorId: string): StoredToken | undefined {
    return this.#ctx.data.store.get<StoredToken>(tokenCollection, accessorId)?.doc;
  }

  roleById(id: string): StoredRole | undefined {
    return this.#ctx.data.store.get<StoredRole>(roleCollection, id)?.doc;
  }

  roleByName(name: string): StoredRole | undefined {
    const id = this.#roleIdByName.get(name);
    return id === undefined ? undefined : this.roleById(id);
  }

  /**
   * A token's role links as Nomad renders them: links to deleted roles dropped, names as the roles are named
   * now; null when the token never had a role.
   */
  roleLinks(token: StoredToken): RoleLink[] | null {
    if (!token.Roles) return null;
    const links: RoleLink[] = [];
    for (const id of token.Roles) {
      const role = this.roleById(id);
      if (role) links.push({ ID: id, Name: role.Name });
    }
    return links;
  }

  /**
   * HMAC of a presented secret. The HMAC costs ~0.1 ms, more than the rest of a small request, so recent
   * results are memoized (bounded); the map lives only in this process's memory, like the request itself. Only
   * secrets of a plausible length are kept (secrets wharf issues are 36-character UUIDs): a stranger's 50 KB
   * made-up header would otherwise stay in memory until the memo is emptied (docs/security.md).
   */
  #secretHmac(secret: string): string {
    if (secret.length > maxMemoizedSecretLength) return this.#ctx.data.keys.hmac(tokenHmacPurpose, secret);
    let h = this.#hmacCache.get(secret);
    if (h === undefined) {
      h = this.#ctx.data.keys.hmac(tokenHmacPurpose, secret);
      if (this.#hmacCache.size >= 1024) this.#hmacCache.clear();
      this.#hmacCache.set(secret, h);
    }
    return h;
  }

  /** The plaintext secret of a stored token (for reads that return SecretID). */
  openSecret(token: StoredToken): string {
    return this.#ctx.data.keys.open(tokenSealPurpose, token.SecretSealed, token.AccessorID);
  }

  /**
   * The caller of a request. ACLs off → management; no token → anonymous. Throws 403
   * `ACL token not found` / `ACL token expired` for a bad secret (the stream maps these to Permission denied).
   */
  resolveCaller(req: RequestContext | Request): AclCaller {
    const request = req instanceof Request ? req : req.request;
    if (!this.enabled) return this.#aclsOff();
    const secret = requestSecret(request);
    if (secret === undefined) return this.anonymousCaller();
    const token = this.tokenBySecret(secret);
    if (!token) throw new ApiError(403, "ACL token not found");
    const caller = this.callerForToken(token);
    if (caller.expiresAt !== undefined && caller.expiresAt <= Date.now()) {
      throw new ApiError(403, "ACL token expired");
    }
    return caller;
  }

  /** 403 Permission denied unless the caller holds a management token (or ACLs are off). */
  requireManagement(req: RequestContext): AclCaller {
    const caller = this.resolveCaller(req);
    if (!caller.acl.management) throw permissionDenied();
    return caller;
  }

  anonymousCaller(): AclCaller {
    return {
      accessorId: "anonymous",
      acl: this.#compile("anonymous", ["anonymous"]),
      policies: ["anonymous"],
      roleIds: [],
      expiresAt: undefined,
    };
  }

  #aclsOff(): AclCaller {
    return { accessorId: "", acl: allowAllAcl, policies: [], roleIds: [], expiresAt: undefined };
  }

  /** The token's rights as of now: its policies and those of the roles it links to that still exist. */
  callerForToken(token: StoredToken): AclCaller {
    const policies = [...token.Policies ?? []];
    const roleIds: string[] = [];
    for (const id of token.Roles ?? []) {
      const role = this.roleById(id);
      if (!role) continue;
      roleIds.push(id);
      for (const p of role.Policies) if (!policies.includes(p.Name)) policies.push(p.Name);
    }
    return {
      accessorId: token.AccessorID,
      acl: token.Type === "management" ? allowAllAcl : this.#compile(token.AccessorID, policies),
      policies,
      roleIds,
      expiresAt: token.ExpirationTime ? Date.parse(token.ExpirationTime) : undefined,
    };
  }

  /** The current caller for an accessor ("anonymous" included); undefined if the token is gone. */
  callerForAccessor(accessorId: string): AclCaller | undefined {
    if (!this.enabled) return this.#aclsOff();
    if (accessorId === "anonymous") return this.anonymousCaller();
    const token = this.tokenByAccessor(accessorId);
    return token ? this.callerForToken(token) : undefined;
  }

  #compile(cacheKey: string, policies: readonly string[]): Acl {
    const key = `${cacheKey}\u0000${policies.join("\u0000")}`;
    let acl = this.#compiled.get(key);
    if (!acl) {
      const found = policies.map((p) => this.#parsed.get(p)).filter((p) => p !== undefined);
      acl = found.length ? this.#engine.compile(found) : denyAllAcl;
      if (this.#compiled.size > 10_000) this.#compiled.clear();
      this.#compiled.set(key, acl);
    }
    return acl;
  }

  #indexToken(stored: StoredDoc<StoredToken>, previous: StoredDoc<StoredToken> | undefined): void {
    if (previous) this.#byHmac.delete(previous.doc.SecretHmac);
    this.#byHmac.set(stored.doc.SecretHmac, stored.id);
    this.#tables.bump(tokenCollection, stored.index);
  }

  #indexPolicy(policy: StoredPolicy): void {
    try {
      this.#parsed.set(policy.Name, this.#engine.parse(policy.Rules));
    } catch (err) {
      this.#ctx.logger.warn("stored ACL policy does not parse", { policy: policy.Name, error: String(err) });
      this.#parsed.delete(policy.Name);
    }
    this.#tables.bump(policyCollection, policy.ModifyIndex);
  }

  #onTokenChange(change: DocChange): void {
    const current = change.current as StoredDoc<StoredToken> | undefined;
    const previous = change.previous as StoredDoc<StoredToken> | undefined;
    if (current) this.#indexToken(current, previous);
    else if (previous) this.#byHmac.delete(previous.doc.SecretHmac);
    this.#tables.bump(tokenCollection, change.index);
    this.#compiled.clear();
    this.#notify({ kind: "token", accessorId: change.id, index: change.index });
  }

  #onPolicyChange(change: DocChange): void {
    if (change.current) this.#indexPolicy(change.current.doc as unknown as StoredPolicy);
    else this.#parsed.delete(change.id);
    this.#tables.bump(policyCollection, change.index);
    this.#compiled.clear();
    this.#notify({ kind: "policy", index: change.index });
  }

  #indexRole(stored: StoredDoc<StoredRole>, previous: StoredDoc<StoredRole> | undefined): void {
    if (previous && this.#roleIdByName.get(previous.doc.Name) === previous.id) {
      this.#roleIdByName.delete(previous.doc.Name);
    }
    this.#roleIdByName.set(stored.doc.Name, stored.id);
    this.#tables.bump(roleCollection, stored.index);
  }

  #onRoleChange(change: DocChange): void {
    const current = change.current as StoredDoc<StoredRole> | undefined;
    const previous = change.previous as StoredDoc<StoredRole> | undefined;
    if (current) this.#indexRole(current, previous);
    else if (previous && this.#roleIdByName.get(previous.doc.Name) === previous.id) {
      this.#roleIdByName.delete(previous.doc.Name);
    }
    this.#tables.bump(roleCollection, change.index);
    this.#compiled.clear();
    this.#notify({ kind: "role", index: change.index });
  }

  #notify(change: AclChange): void {
    for (const l of this.#listeners) {
      try {
        l(change);
      } catch (err) {
        this.#ctx.logger.error("ACL change listener failed", { error: String(err) });
      }
    }
  }
}
