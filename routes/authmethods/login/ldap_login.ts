// The LDAP login (docs/auth-methods.md#ldap) behind POST /v1/auth-methods/{id}:authenticate: one throttle key
// per name as the directory matches it, and one account per directory entry, keyed by the entry's DN.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { identityLocks, upsertExternalAccount } from "./external_accounts.ts";
import type { CredentialCheck, CredentialLogin } from "./login_request.ts";
import type { LoginAttempt } from "../throttle.ts";
import { credentialLogin } from "./token_delivery.ts";
import { ldapAuthenticate, type LdapMethodAttributes } from "./ldap_client.ts";
import { derefAliasesOf } from "./ldap_escape.ts";
import { ldapLoginKey } from "../../../lib/directory_names.ts";
import { mapLdapAttributes } from "./ldap_profile.ts";
import type { AuthService } from "../service.ts";
import type { AccountDoc, MethodDoc } from "../state.ts";

export const ldapLogin: CredentialLogin = (svc, ctx, req, loginName, password) =>
  // Every spelling the directory takes for one entry shares one throttle key.
  credentialLogin(
    svc,
    ctx,
    req,
    loginName,
    ldapLoginKey(loginName),
    (attempt) => checkLdap(svc, req, loginName, password, attempt),
  );

/**
 * An LDAP login's bind and search (under `attempt`) and, when they passed, the locks and the in-commit
 * upsert of the entry's account: what the :authenticate login and the registry's sign-in share.
 */
export async function checkLdap(
  svc: AuthService,
  req: { id: string; method: MethodDoc },
  loginName: string,
  password: string,
  attempt: LoginAttempt,
): Promise<CredentialCheck> {
  const login = ldapLoginKey(loginName);
  const attrs = ldapAttributesOf(svc, req.id, req.method);
  const timeoutMs = svc.settings.ldapTimeoutMs;
  const result = await attempt.check(
    () =>
      ldapAuthenticate(attrs, loginName.trim(), password, {
        timeoutMs,
        connections: svc.ldapPool.source(req.id, attrs, timeoutMs, derefAliasesOf(attrs.dereference_aliases)),
      }),
    (r) => r.ok,
  );
  if (!result.ok) {
    svc.app.logger.info("ldap authentication failed", {
      auth_method_id: req.id,
      reason: result.reason,
      detail: result.message,
    });
    return { ok: false, reason: result.reason };
  }
  const mapped = mapLdapAttributes(req.method.attributes.account_attribute_maps, result.attributes);
  const attributes: Record<string, unknown> = {
    login_name: login,
    dn: result.entryDn,
    ...mapped,
    ...(result.groups.length ? { member_of_groups: result.groups } : {}),
  };
  // Accounts made before were keyed by the lowercased login name: the first login since adopts the one
  // its usual spelling made.
  const legacyKey = login;
  return {
    ok: true,
    locks: identityLocks(svc, req.id, result.entryDn, legacyKey),
    resolve: () =>
      upsertExternalAccount(
        svc,
        req,
        result.entryDn,
        attributes,
        () => legacyAccount(svc, req.id, legacyKey, result.entryDn),
      ),
  };
}

/**
 * The method's LDAP settings with secrets opened, once per method document: a method write stores a new
 * document, so an entry never outlives the settings it was made from. Read-only to every login.
 */
const openedLdapAttributes = new WeakMap<MethodDoc, LdapMethodAttributes>();

function ldapAttributesOf(svc: AuthService, id: string, method: MethodDoc): LdapMethodAttributes {
  let attrs = openedLdapAttributes.get(method);
  if (!attrs) {
    attrs = svc.state.openAttributes(id, method) as unknown as LdapMethodAttributes;
    openedLdapAttributes.set(method, attrs);
  }
  return attrs;
}

/** An account keyed by login name (before DN keys), when its `dn` names the same entry. */
function legacyAccount(
  svc: AuthService,
  methodId: string,
  legacyKey: string,
  entryDn: string,
): StoredDoc<AccountDoc> | undefined {
  if (legacyKey === entryDn) return undefined;
  const found = svc.state.accountByKey(methodId, legacyKey);
  const dn = found?.doc.attributes.dn;
  return typeof dn === "string" && dn.toLowerCase() === entryDn.toLowerCase() ? found : undefined;
}
