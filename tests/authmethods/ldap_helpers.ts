// LDAP method setup the directory tests share: a real slapd, a wharf auth server, one active LDAP method on it,
// and a login through that method; everything stopped again after.

import { assertEquals } from "../helpers/assert.ts";
import { peopleDn, type Slapd, startSlapd } from "../fixtures/slapd.ts";
import { type AuthServer, callApi, startAuthServer } from "../fixtures/wharf_auth.ts";

/** A direct bind under the fixture directory's people (`uid=NAME,ou=people,…`). */
export const directBindAttrs = { user_dn: peopleDn, user_attr: "uid" } as const;

export type LdapLogin = (name: string, password: string) => ReturnType<typeof callApi>;

export interface LdapMethod {
  ldap: Slapd;
  methodId: string;
}

/** Runs `fn` against a new active-public LDAP method named `name` with `attributes` (its urls: the slapd). */
export async function withLdapMethod(
  attributes: Record<string, unknown>,
  fn: (api: AuthServer, login: LdapLogin, method: LdapMethod) => Promise<void>,
  name = "directory",
): Promise<void> {
  const ldap = await startSlapd();
  const api = await startAuthServer();
  try {
    const created = await api.call("POST", "/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      name,
      attributes: { state: "active-public", urls: [ldap.ldapUrl], ...attributes },
    });
    assertEquals(created.status, 200, JSON.stringify(created.body));
    const methodId = String(created.body.id);
    await fn(
      api,
      (name, password) =>
        callApi(api.url, "POST", `/v1/auth-methods/${methodId}:authenticate`, {
          attributes: { login_name: name, password },
        }),
      { ldap, methodId },
    );
  } finally {
    await api.stop();
    await ldap.stop();
  }
}
