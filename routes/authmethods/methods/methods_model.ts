// Auth-method records: attribute dispatch by type, secret sealing/HMACs, and the two JSON views
// (full for admins; reduced for anonymous and non-admin callers), cached per stored version.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import type { AttrInput, AttrOutcome } from "./attrs_common.ts";
import { applyLdapAttributes, renderLdapAttributes } from "./attrs_ldap.ts";
import { applyOidcAttributes, renderOidcAttributes } from "./attrs_oidc.ts";
import { applyPasswordAttributes, renderPasswordAttributes } from "./attrs_password.ts";
import { type MethodType, omitZero } from "../common.ts";
import type { AuthState, MethodDoc } from "../state.ts";
import { renderScopeRef } from "../tokens.ts";

export function applyAttributes(type: MethodType, a: AttrInput): AttrOutcome {
  if (type === "password") return applyPasswordAttributes(a);
  if (type === "oidc") return applyOidcAttributes(a);
  return applyLdapAttributes(a);
}

/** Seals new secrets into the document and recomputes their display HMACs; null clears. */
export function storeSecrets(
  state: AuthState,
  id: string,
  doc: MethodDoc,
  secrets: Record<string, string | null>,
): void {
  for (const [field, value] of Object.entries(secrets)) {
    if (value === null) {
      delete doc.secrets[field];
      delete doc.hmacs[field];
    } else {
      doc.secrets[field] = state.seal(id, field, value);
      doc.hmacs[field] = state.secretHmac(id, doc.scope_id, value);
    }
  }
}

export function methodState(doc: MethodDoc): string | undefined {
  return typeof doc.attributes.state === "string" ? doc.attributes.state : undefined;
}

/** Anonymous and non-admin callers see password methods and active-public OIDC/LDAP ones. */
export function publiclyListed(doc: MethodDoc): boolean {
  return doc.type === "password" || methodState(doc) === "active-public";
}

const cache = new WeakMap<StoredDoc<MethodDoc>, { scopeIndex: number; admin?: object; reduced?: object }>();

/** The record as `admin` or reduced view; memoized per stored version (stored docs are immutable). */
export function renderMethod(
  state: AuthState,
  stored: StoredDoc<MethodDoc>,
  admin: boolean,
): Record<string, unknown> {
  const scope = state.scope(stored.doc.scope_id);
  const scopeIndex = scope?.index ?? 0;
  let entry = cache.get(stored);
  if (!entry || entry.scopeIndex !== scopeIndex) cache.set(stored, entry = { scopeIndex });
  const hit = admin ? entry.admin : entry.reduced;
  if (hit) return hit as Record<string, unknown>;
  const d = stored.doc;
  const isPrimary = scope?.doc.primary_auth_method_id === stored.id;
  const base = {
    id: stored.id,
    scope_id: d.scope_id,
    scope: renderScopeRef(d.scope_id, scope?.doc),
    name: d.name,
    description: d.description,
  };
  let out: Record<string, unknown>;
  if (admin) {
    out = omitZero({
      ...base,
      created_time: d.created_time,
      updated_time: d.updated_time,
      version: stored.version,
      type: d.type,
      attributes: renderAttributes(d),
      is_primary: isPrimary,
      authorized_actions: d.type === "oidc"
        ? ["no-op", "read", "update", "delete", "change-state", "authenticate"]
        : ["no-op", "read", "update", "delete", "authenticate"],
      authorized_collection_actions: d.type === "password"
        ? { accounts: ["create", "list"] }
        : { accounts: ["create", "list"], "managed-groups": ["create", "list"] },
    });
    entry.admin = out;
  } else {
    out = omitZero({ ...base, type: d.type, is_primary: isPrimary, authorized_actions: ["authenticate"] });
    entry.reduced = out;
  }
  return out;
}

export function renderAttributes(d: MethodDoc): Record<string, unknown> {
  if (d.type === "password") return renderPasswordAttributes(d.attributes);
  if (d.type === "oidc") return renderOidcAttributes(d.attributes, d.hmacs);
  return renderLdapAttributes(d.attributes, d.hmacs);
}
