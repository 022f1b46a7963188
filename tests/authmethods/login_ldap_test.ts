// End to end: LDAP auth methods created through the API log users in against a real slapd.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  baseDn,
  groupsDn,
  peopleDn,
  serviceAccount,
  slapdSkipReason,
  startSlapd,
  upnDomain,
  users,
} from "../fixtures/slapd.ts";
import { type AuthServer, callApi, startAuthServer } from "../fixtures/wharf_auth.ts";

const ignore = slapdSkipReason !== undefined;

async function createLdapMethod(
  api: AuthServer,
  name: string,
  attributes: Record<string, unknown>,
): Promise<string> {
  const r = await api.call("POST", "/v1/auth-methods", {
    scope_id: "global",
    type: "ldap",
    name,
    attributes: { state: "active-public", ...attributes },
  });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return String(r.body.id);
}

async function login(api: AuthServer, methodId: string, loginName: string, password: string) {
  return await callApi(api.url, "POST", `/v1/auth-methods/${methodId}:authenticate`, {
    command: "login",
    attributes: { login_name: loginName, password },
  });
}

/** Logs in, checks the token reads itself, and returns the token attributes. */
async function loginOk(api: AuthServer, methodId: string, loginName: string, password: string) {
  const r = await login(api, methodId, loginName, password);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  const attrs = r.body.attributes as Record<string, string>;
  assertMatch(attrs.token!, /^at_[0-9A-Za-z]{10}_s1/);
  assertEquals(attrs.auth_method_id, methodId);
  const self = await callApi(api.url, "GET", `/v1/auth-tokens/${attrs.id}`, undefined, attrs.token);
  assertEquals(self.status, 200, JSON.stringify(self.body));
  return attrs;
}

async function account(api: AuthServer, accountId: string): Promise<Record<string, unknown>> {
  const r = await api.call("GET", `/v1/accounts/${accountId}`);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return r.body.attributes as Record<string, unknown>;
}

Deno.test({
  name: "LDAP login through the API works against a real slapd",
  ignore,
  async fn(t) {
    const ldap = await startSlapd();
    const api = await startAuthServer();
    try {
      await t.step("direct bind issues a token; the account carries dn, email, full name", async () => {
        const id = await createLdapMethod(api, "direct", {
          urls: [ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
          account_attribute_maps: ["mail=email", "cn=fullName"],
        });
        const first = await loginOk(api, id, "alice", users.alice.password);
        const acct = await account(api, first.account_id!);
        assertEquals(acct.login_name, "alice");
        assertEquals(acct.dn, users.alice.dn);
        assertEquals(acct.email, users.alice.mail);
        assertEquals(acct.full_name, users.alice.cn);
        // The second login reuses the account and its user (login names are case-insensitive).
        const second = await loginOk(api, id, "Alice", users.alice.password);
        assertEquals(second.account_id, first.account_id);
        assertEquals(second.user_id, first.user_id);
      });

      await t.step("the login after a PATCH of the maps or the bind settings uses the new ones", async () => {
        const id = await createLdapMethod(api, "patched", {
          urls: [ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
          account_attribute_maps: ["mail=email", "cn=fullName"],
        });
        const patch = async (attributes: Record<string, unknown>) => {
          const method = await api.call("GET", `/v1/auth-methods/${id}`);
          const r = await api.call("PATCH", `/v1/auth-methods/${id}`, {
            version: method.body.version,
            attributes,
          });
          assertEquals(r.status, 200, JSON.stringify(r.body));
        };
        const first = await loginOk(api, id, "alice", users.alice.password);
        assertEquals((await account(api, first.account_id!)).full_name, users.alice.cn);
        // Swapped maps (login settings are remembered per method version): the next login refreshes the profile.
        await patch({ account_attribute_maps: ["cn=email", "mail=fullName"] });
        const second = await loginOk(api, id, "alice", users.alice.password);
        const swapped = await account(api, second.account_id!);
        assertEquals(swapped.email, users.alice.cn);
        assertEquals(swapped.full_name, users.alice.mail);
        // A user_attr under which alice has no entry: her bind DN changes, the login fails.
        await patch({ user_attr: "cn" });
        assertEquals((await login(api, id, "alice", users.alice.password)).status, 401);
        await patch({ user_attr: "uid" });
        await loginOk(api, id, "alice", users.alice.password);
      });

      await t.step("a wrong password, an unknown user and an empty password are 401 or 400", async () => {
        const id = await createLdapMethod(api, "direct-failures", {
          urls: [ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
        });
        for (const [name, pw] of [["alice", "wrong-password"], ["nobody", "whatever-pw"]]) {
          const r = await login(api, id, name!, pw!);
          assertEquals(r.status, 401);
          assertEquals(r.body.kind, "Unauthenticated");
          assertEquals(r.body.message, "Unable to authenticate.");
        }
        const empty = await login(api, id, "alice", "");
        assertEquals(empty.status, 400);
      });

      await t.step("discover_dn with a service account, groups and upn_domain", async () => {
        const id = await createLdapMethod(api, "discover", {
          urls: [ldap.ldapUrl],
          discover_dn: true,
          bind_dn: serviceAccount.dn,
          bind_password: serviceAccount.password,
          user_dn: baseDn,
          upn_domain: upnDomain,
          enable_groups: true,
          group_dn: groupsDn,
          account_attribute_maps: ["mail=email", "displayName=fullName"],
        });
        const bob = await loginOk(api, id, "bob", users.bob.password);
        const acct = await account(api, bob.account_id!);
        assertEquals(acct.dn, users.bob.dn);
        assertEquals(acct.member_of_groups, ["developers", "operators"]);
        assertEquals(acct.full_name, users.bob.cn);
        // carol sits one level deeper: only the subtree search finds her.
        const carol = await loginOk(api, id, "carol", users.carol.password);
        assertEquals((await account(api, carol.account_id!)).dn, users.carol.dn);
        assertEquals((await login(api, id, "carol", "nope-nope")).status, 401);
      });

      await t.step("a down first URL falls through to the next server", async () => {
        const id = await createLdapMethod(api, "failover", {
          urls: [ldap.downUrl, ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
        });
        await loginOk(api, id, "bob", users.bob.password);
        const onlyDown = await createLdapMethod(api, "all-down", { urls: [ldap.downUrl], user_dn: peopleDn });
        assertEquals((await login(api, onlyDown, "bob", users.bob.password)).status, 401);
      });

      await t.step("StartTLS and ldaps trust the configured CA certificate", async () => {
        const startTls = await createLdapMethod(api, "starttls", {
          urls: [ldap.ldapUrl],
          start_tls: true,
          certificates: [ldap.pki.caPem],
          user_dn: peopleDn,
          user_attr: "uid",
        });
        await loginOk(api, startTls, "alice", users.alice.password);
        const ldaps = await createLdapMethod(api, "ldaps", {
          urls: [ldap.ldapsUrl],
          certificates: [ldap.pki.caPem],
          discover_dn: true,
          user_dn: baseDn,
          user_attr: "uid",
        });
        await loginOk(api, ldaps, "carol", users.carol.password);
        const untrusted = await createLdapMethod(api, "ldaps-untrusted", {
          urls: [ldap.ldapsUrl],
          certificates: [ldap.pki.otherCaPem],
          user_dn: peopleDn,
          user_attr: "uid",
        });
        assertEquals((await login(api, untrusted, "alice", users.alice.password)).status, 401);
      });

      await t.step("client_certificate is presented to a slapd that demands one", async () => {
        const mtls = await startSlapd({ requireClientCertificate: true });
        try {
          const attributes = {
            urls: [mtls.ldapsUrl],
            certificates: [mtls.pki.caPem],
            user_dn: peopleDn,
            user_attr: "uid",
          };
          const withCert = await createLdapMethod(api, "client-cert", {
            ...attributes,
            client_certificate: mtls.pki.clientCertPem,
            client_certificate_key: mtls.pki.clientKeyPem,
          });
          await loginOk(api, withCert, "bob", users.bob.password);
          const read = await api.call("GET", `/v1/auth-methods/${withCert}`);
          const attrs = read.body.attributes as Record<string, unknown>;
          assert(!("client_certificate_key" in attrs));
          assert(typeof attrs.client_certificate_key_hmac === "string");
          const withoutCert = await createLdapMethod(api, "no-client-cert", attributes);
          assertEquals((await login(api, withoutCert, "bob", users.bob.password)).status, 401);
        } finally {
          await mtls.stop();
        }
      });

      await t.step("an inactive LDAP method refuses logins with 400 FailedPrecondition", async () => {
        const id = await createLdapMethod(api, "inactive", {
          state: "inactive",
          urls: [ldap.ldapUrl],
          user_dn: peopleDn,
          user_attr: "uid",
        });
        const r = await login(api, id, "alice", users.alice.password);
        assertEquals(r.status, 400);
        assertEquals(r.body.kind, "FailedPrecondition");
      });
    } finally {
      await api.stop();
      await ldap.stop();
    }
  },
});

Deno.test({
  name: "an LDAP login that refreshes a profile while the account is deleted does not bring it back",
  ignore,
  async fn() {
    const ldap = await startSlapd();
    const api = await startAuthServer();
    try {
      const maps = [["mail=email", "cn=fullName"], ["mail=email"]];
      const id = await createLdapMethod(api, "race", {
        urls: [ldap.ldapUrl],
        user_dn: peopleDn,
        user_attr: "uid",
        account_attribute_maps: maps[0],
      });
      for (let round = 0; round < 12; round++) {
        const accountId = (await loginOk(api, id, "alice", users.alice.password)).account_id!;
        // New maps make the next login rewrite the stored profile of this account.
        const method = await api.call("GET", `/v1/auth-methods/${id}`);
        const patched = await api.call("PATCH", `/v1/auth-methods/${id}`, {
          version: method.body.version,
          attributes: { account_attribute_maps: maps[(round + 1) % 2] },
        });
        assertEquals(patched.status, 200, JSON.stringify(patched.body));
        // The delay varies so that the delete lands at different points of the login's directory round trip.
        const [deleted] = await Promise.all([
          new Promise((r) => setTimeout(r, round)).then(() =>
            api.call("DELETE", `/v1/accounts/${accountId}`)
          ),
          login(api, id, "alice", users.alice.password),
        ]);
        assertEquals(deleted.status, 200);
        const after = await api.call("GET", `/v1/accounts/${accountId}`);
        assertEquals(after.status, 404, `round ${round}: deleted account came back`);
      }
    } finally {
      await api.stop();
      await ldap.stop();
    }
  },
});
