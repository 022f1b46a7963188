// Service principals (docs/registry.md#service-principals-for-ci) as typed operations for a caller: list,
// create (the secret is returned this once) and delete an organization's principals. Admins and the
// organization's owners only.

import { prefixedId, randomSecret } from "../../../lib/ids.ts";
import type { DocWrite } from "../../../lib/store/mod.ts";
import { requireOrgManager } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { FieldErrors } from "../core/fields.ts";
import { registryLock } from "../core/locks.ts";
import { now } from "../core/model.ts";
import { MAX_PER_ORG, type PrincipalDoc, PRINCIPALS } from "../core/principals.ts";
import type { Actor, Registry } from "../core/registry.ts";

const WHAT = "service principals";

/** A principal as its organization's managers see it (never its secret). */
export interface PrincipalRecord {
  name: string;
  client_id: string;
  created_at: string;
  last_used_at: string | null;
}

/** A principal just created, with the secret shown this once. */
export interface CreatedPrincipal {
  name: string;
  client_id: string;
  client_secret: string;
  created_at: string;
}

function record(reg: Registry, p: PrincipalDoc): PrincipalRecord {
  const used = reg.principals.lastUsed.get(p.client_id);
  return {
    name: p.name,
    client_id: p.client_id,
    created_at: p.created_at,
    last_used_at: used ? new Date(used).toISOString() : null,
  };
}

/** The organization's principals, oldest first. */
export function listPrincipals(who: Actor, orgName: string): PrincipalRecord[] {
  const org = requireOrgManager(who, orgName, WHAT);
  const list = who.reg.principals.ofOrg(org.id).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return list.map((p) => record(who.reg, p));
}

/** A new principal of the organization; `input.name` is required (422 otherwise, or when taken). */
export async function createPrincipal(
  who: Actor,
  orgName: string,
  input: Record<string, unknown>,
): Promise<CreatedPrincipal> {
  const actor = who.caller.user;
  const org = requireOrgManager(who, orgName, WHAT);
  const errors = new FieldErrors();
  const name = errors.required(input, "name", "Name", 255)?.trim();
  errors.throwIfAny();
  const reg = who.reg;
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
  return {
    name: doc.name,
    client_id: doc.client_id,
    client_secret: clientSecret,
    created_at: doc.created_at,
  };
}

/** Deletes the principal; its tokens are revoked in the same commit. */
export async function deletePrincipal(who: Actor, orgName: string, clientId: string): Promise<void> {
  const org = requireOrgManager(who, orgName, WHAT);
  const reg = who.reg;
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
}
