// The LDAP connection pool against a real slapd: reused connections still bind as each user, a failed bind
// leaves no identity behind, a closed idle connection is replaced, and a changed method uses its new config.

import { assert, assertEquals } from "../helpers/assert.ts";
import { peopleDn, serviceAccount, slapdSkipReason, startSlapd, users } from "../fixtures/slapd.ts";
import type { AuthServer } from "../fixtures/wharf_auth.ts";
import { directBindAttrs, withLdapMethod } from "./ldap_helpers.ts";
import { ldapAuthenticate } from "../../routes/authmethods/login/ldap_client.ts";
import { LdapConnectionPool } from "../../routes/authmethods/ldap_pool.ts";

const ignore = slapdSkipReason !== undefined;

Deno.test({
  name: "pooled LDAP connections bind as each user and drop connections the server closed",
  ignore,
  async fn() {
    const ldap = await startSlapd();
    const pool = new LdapConnectionPool({ maxIdlePerMethod: 4, idleMs: 60_000 });
    try {
      const attrs = { urls: [ldap.ldapUrl], user_dn: peopleDn, user_attr: "uid" };
      const source = () => pool.source("amldap_test", attrs, 5000, "never");
      const alice = await ldapAuthenticate(attrs, "alice", users.alice.password, { connections: source() });
      assert(alice.ok);
      assertEquals(pool.idleCount("amldap_test"), 1);
      // Same connection, another user: the result is bob's entry, not alice's.
      const bob = await ldapAuthenticate(attrs, "bob", users.bob.password, { connections: source() });
      assert(bob.ok && bob.entryDn === users.bob.dn, JSON.stringify(bob));
      // A wrong password on the reused connection fails; the connection stays usable for the next login.
      const wrong = await ldapAuthenticate(attrs, "alice", "not-her-password", { connections: source() });
      assert(!wrong.ok && wrong.reason === "invalid_credentials", JSON.stringify(wrong));
      assertEquals(pool.idleCount("amldap_test"), 1);
      const again = await ldapAuthenticate(attrs, "alice", users.alice.password, { connections: source() });
      assert(again.ok && again.entryDn === users.alice.dn);

      // Close the idle connection under the pool: the next login opens a new one and succeeds.
      const held = await source().open();
      assert(held.reused);
      await held.client.unbind();
      await source().done(held.client, true);
      assertEquals(pool.idleCount("amldap_test"), 0);
      const afterClose = await ldapAuthenticate(attrs, "bob", users.bob.password, { connections: source() });
      assert(afterClose.ok, JSON.stringify(afterClose));

      // A login that began before its method was changed or deleted parks nothing when it ends.
      const inFlight = source();
      const open = await inFlight.open();
      pool.invalidate("amldap_test");
      await inFlight.done(open.client, true);
      assertEquals(pool.idleCount("amldap_test"), 0);

      // Other connection settings for the same method retire the old connections.
      const down = { ...attrs, urls: [ldap.downUrl] };
      const refused = await ldapAuthenticate(down, "bob", users.bob.password, {
        connections: pool.source("amldap_test", down, 5000, "never"),
      });
      assert(!refused.ok && refused.reason === "directory_error", JSON.stringify(refused));
      assertEquals(pool.idleCount("amldap_test"), 0);
    } finally {
      pool.close();
      await ldap.stop();
    }
  },
});

async function patchMethod(api: AuthServer, id: string, attributes: Record<string, unknown>) {
  const cur = await api.call("GET", `/v1/auth-methods/${id}`);
  const r = await api.call("PATCH", `/v1/auth-methods/${id}`, { version: cur.body.version, attributes });
  assertEquals(r.status, 200, JSON.stringify(r.body));
}

Deno.test({
  name: "an LDAP login after the method's config changes uses the new config",
  ignore,
  fn: () =>
    withLdapMethod(directBindAttrs, async (api, login, { ldap, methodId: id }) => {
      assertEquals((await login("alice", users.alice.password)).status, 200);
      assertEquals((await login("alice", users.alice.password)).status, 200);
      // Point the method at a server that is down: a kept connection to the old URL must not be used.
      await patchMethod(api, id, { urls: [ldap.downUrl] });
      assertEquals((await login("alice", users.alice.password)).status, 401);
      // Back to the directory, but with a user_dn under which alice does not exist.
      await patchMethod(api, id, { urls: [ldap.ldapUrl], user_dn: `ou=nobody,${peopleDn}` });
      assertEquals((await login("alice", users.alice.password)).status, 401);
      // discover_dn through the service account: the pooled connection re-binds as it for the search.
      await patchMethod(api, id, {
        user_dn: peopleDn,
        discover_dn: true,
        bind_dn: serviceAccount.dn,
        bind_password: serviceAccount.password,
      });
      assertEquals((await login("bob", users.bob.password)).status, 200);
      assertEquals((await login("bob", "wrong-password")).status, 401);
      assertEquals((await login("alice", users.alice.password)).status, 200);
      // A deleted method refuses logins (404), whatever the pool holds.
      assertEquals((await api.call("DELETE", `/v1/auth-methods/${id}`)).status, 200);
      assertEquals((await login("alice", users.alice.password)).status, 404);
    }, "pooled"),
});
