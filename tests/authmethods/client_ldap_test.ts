// ldapAuthenticate against a real slapd: direct bind, discover_dn, upn_domain, groups, aliases, TLS, failover.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  ldapAuthenticate,
  type LdapAuthResult,
  type LdapMethodAttributes,
} from "../../routes/authmethods/login/ldap_client.ts";
import {
  aliasesDn,
  baseDn,
  groupsDn,
  peopleDn,
  serviceAccount,
  type Slapd,
  slapdSkipReason,
  startSlapd,
  upnDomain,
  users,
} from "../fixtures/slapd.ts";

const ignore = slapdSkipReason !== undefined;

function expectOk(result: LdapAuthResult): Extract<LdapAuthResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected success, got ${result.reason}: ${result.message}`);
  return result;
}

function expectFailure(result: LdapAuthResult, reason: "invalid_credentials" | "directory_error"): string {
  if (result.ok) throw new Error(`expected ${reason}, got success for ${result.entryDn}`);
  assertEquals(result.reason, reason, result.message);
  return result.message;
}

Deno.test({
  name: "ldapAuthenticate logs users in against a real slapd over plain LDAP",
  ignore,
  async fn(t) {
    const ldap: Slapd = await startSlapd();
    try {
      const direct: LdapMethodAttributes = { urls: [ldap.ldapUrl], user_dn: peopleDn, user_attr: "uid" };
      const discover: LdapMethodAttributes = {
        urls: [ldap.ldapUrl],
        discover_dn: true,
        user_dn: baseDn,
        user_attr: "uid",
      };

      await t.step("direct bind succeeds and returns the entry without its password", async () => {
        const r = expectOk(await ldapAuthenticate(direct, "alice", users.alice.password));
        assertEquals(r.entryDn, users.alice.dn);
        assertEquals(r.attributes.mail, [users.alice.mail]);
        assertEquals(r.attributes.cn, [users.alice.cn]);
        assert(!Object.keys(r.attributes).some((k) => k.toLowerCase() === "userpassword"));
        assertEquals(r.groups, []);
      });

      await t.step("direct bind fails with invalid_credentials when the password is wrong", async () => {
        expectFailure(await ldapAuthenticate(direct, "alice", "not-her-password"), "invalid_credentials");
      });

      await t.step("direct bind fails with invalid_credentials when the user does not exist", async () => {
        expectFailure(await ldapAuthenticate(direct, "mallory", "whatever"), "invalid_credentials");
      });

      await t.step("an empty password is refused before the directory is asked", async () => {
        // An empty simple bind would be an anonymous bind, which a directory accepts.
        const msg = expectFailure(await ldapAuthenticate(direct, "alice", ""), "invalid_credentials");
        assertMatch(msg, /empty password/);
      });

      await t.step("filter metacharacters in the login name cannot widen the search", async () => {
        expectFailure(await ldapAuthenticate(discover, "*", "alice-password"), "invalid_credentials");
        expectFailure(
          await ldapAuthenticate(discover, "al*)(uid=*", "alice-password"),
          "invalid_credentials",
        );
      });

      await t.step("discover_dn finds a user nested below user_dn with an anonymous search", async () => {
        const r = expectOk(await ldapAuthenticate(discover, "carol", users.carol.password));
        assertEquals(r.entryDn, users.carol.dn);
        expectFailure(await ldapAuthenticate(discover, "carol", "wrong"), "invalid_credentials");
      });

      await t.step(
        "bind_dn + bind_password search as the service account (no discover_dn needed)",
        async () => {
          const attrs = {
            urls: [ldap.ldapUrl],
            bind_dn: serviceAccount.dn,
            bind_password: serviceAccount.password,
            user_dn: baseDn,
            user_attr: "uid",
          };
          assertEquals(
            expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password)).entryDn,
            users.bob.dn,
          );
        },
      );

      await t.step("a wrong bind_password is a directory_error, not the user's fault", async () => {
        const attrs = { ...discover, bind_dn: serviceAccount.dn, bind_password: "nope" };
        expectFailure(await ldapAuthenticate(attrs, "bob", users.bob.password), "directory_error");
      });

      await t.step("a custom user_filter restricts who may log in", async () => {
        const attrs = {
          ...discover,
          user_filter: "(&({{.UserAttr}}={{.Username}})(mail=*@example.org)(cn=Bob*))",
        };
        expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password));
        expectFailure(await ldapAuthenticate(attrs, "alice", users.alice.password), "invalid_credentials");
      });

      await t.step("upn_domain searches userPrincipalName with the login name", async () => {
        const attrs = { urls: [ldap.ldapUrl], discover_dn: true, user_dn: baseDn, upn_domain: upnDomain };
        const r = expectOk(await ldapAuthenticate(attrs, "carol", users.carol.password));
        assertEquals(r.entryDn, users.carol.dn);
        assertEquals(r.attributes.userPrincipalName, [users.carol.upn]);
        expectFailure(await ldapAuthenticate(attrs, "carol", "wrong"), "invalid_credentials");
      });

      await t.step("groups come from groupOfNames members and posixGroup memberUid", async () => {
        const attrs = { ...discover, enable_groups: true, group_dn: groupsDn };
        assertEquals(expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password)).groups, [
          "admins",
          "developers",
        ]);
        assertEquals(expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password)).groups, [
          "developers",
          "operators",
        ]);
        assertEquals(expectOk(await ldapAuthenticate(attrs, "carol", users.carol.password)).groups, []);
      });

      await t.step("paged group search (maximum_page_size) returns every group", async () => {
        const attrs = { ...discover, enable_groups: true, group_dn: groupsDn, maximum_page_size: 1 };
        assertEquals(expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password)).groups, [
          "admins",
          "developers",
        ]);
      });

      await t.step(
        "group names are taken from DN-valued group_attr (memberOf on the user entry)",
        async () => {
          const attrs = {
            ...discover,
            enable_groups: true,
            group_dn: peopleDn,
            group_filter: "(&(objectClass=inetOrgPerson)(uid={{.Username}}))",
            group_attr: "memberOf",
          };
          assertEquals(expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password)).groups, [
            "admins",
            "developers",
          ]);
        },
      );

      await t.step("anon_group_search binds anonymously before searching groups", async () => {
        const attrs = { ...discover, enable_groups: true, anon_group_search: true, group_dn: groupsDn };
        assertEquals(expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password)).groups, [
          "developers",
          "operators",
        ]);
      });

      await t.step("a missing group_dn entry yields no groups rather than a failed login", async () => {
        const attrs = { ...discover, enable_groups: true, group_dn: `ou=nowhere,${baseDn}` };
        assertEquals(expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password)).groups, []);
      });

      await t.step("dereference_aliases decides whether an alias below user_dn finds the user", async () => {
        const attrs = { urls: [ldap.ldapUrl], discover_dn: true, user_dn: aliasesDn, user_attr: "uid" };
        for (const deref of ["DerefAlways", "searching"]) {
          const r = expectOk(
            await ldapAuthenticate({ ...attrs, dereference_aliases: deref }, "alice", "alice-password"),
          );
          assertEquals(r.entryDn, users.alice.dn);
        }
        for (const deref of [undefined, "NeverDerefAliases", "finding"]) {
          const r = await ldapAuthenticate(
            { ...attrs, dereference_aliases: deref },
            "alice",
            "alice-password",
          );
          expectFailure(r, "invalid_credentials");
        }
      });

      await t.step("a down first URL falls through to the next one", async () => {
        const attrs = { ...direct, urls: [ldap.downUrl, ldap.ldapUrl] };
        assertEquals(
          expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password)).entryDn,
          users.alice.dn,
        );
      });

      await t.step("only down URLs give a directory_error naming each URL", async () => {
        const msg = expectFailure(
          await ldapAuthenticate({ ...direct, urls: [ldap.downUrl] }, "alice", users.alice.password),
          "directory_error",
        );
        assertMatch(msg, new RegExp(ldap.downUrl.replace(/[.:/]/g, "\\$&")));
      });

      await t.step("a server that accepts but never answers times out as a directory_error", async () => {
        const blackHole = Deno.listen({ hostname: "127.0.0.1", port: 0 });
        const held: Deno.Conn[] = [];
        const accepting = (async () => {
          for await (const conn of blackHole) held.push(conn);
        })().catch(() => {});
        try {
          const url = `ldap://127.0.0.1:${(blackHole.addr as Deno.NetAddr).port}`;
          const started = Date.now();
          const r = await ldapAuthenticate({ ...direct, urls: [url] }, "alice", users.alice.password, {
            timeoutMs: 300,
          });
          expectFailure(r, "directory_error");
          assert(Date.now() - started < 5000, "the operation timeout was not applied");
          // ldaps: the TLS handshake never completes, so the next URL is tried.
          const tlsUrl = url.replace("ldap://", "ldaps://");
          const next = await ldapAuthenticate(
            { ...direct, urls: [tlsUrl, ldap.ldapUrl] },
            "alice",
            users.alice.password,
            { timeoutMs: 300 },
          );
          expectOk(next);
        } finally {
          blackHole.close();
          for (const conn of held) conn.close();
          await accepting;
        }
      });

      await t.step("no way to derive a bind DN is a directory_error", async () => {
        expectFailure(await ldapAuthenticate({ urls: [ldap.ldapUrl] }, "alice", "x"), "directory_error");
      });
    } finally {
      await ldap.stop();
    }
  },
});

Deno.test({
  name: "ldapAuthenticate speaks TLS to a real slapd: StartTLS and ldaps with the generated CA",
  ignore,
  async fn(t) {
    const ldap = await startSlapd();
    try {
      const base = { discover_dn: true, user_dn: baseDn, user_attr: "uid" };
      const ca = [ldap.pki.caPem];

      await t.step("StartTLS on ldap:// succeeds when the CA is trusted", async () => {
        const attrs = { ...base, urls: [ldap.ldapUrl], start_tls: true, certificates: ca };
        expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password));
      });

      await t.step("ldaps:// succeeds when the CA is trusted", async () => {
        const attrs = {
          ...base,
          urls: [ldap.ldapsUrl],
          certificates: ca,
          enable_groups: true,
          group_dn: groupsDn,
        };
        assertEquals(expectOk(await ldapAuthenticate(attrs, "bob", users.bob.password)).groups, [
          "developers",
          "operators",
        ]);
      });

      await t.step("an untrusted server certificate fails both ways with a directory_error", async () => {
        const other = [ldap.pki.otherCaPem];
        expectFailure(
          await ldapAuthenticate(
            { ...base, urls: [ldap.ldapsUrl], certificates: other },
            "alice",
            "alice-password",
          ),
          "directory_error",
        );
        expectFailure(
          await ldapAuthenticate(
            { ...base, urls: [ldap.ldapUrl], start_tls: true, certificates: other },
            "alice",
            "alice-password",
          ),
          "directory_error",
        );
      });

      await t.step("insecure_tls skips certificate verification", async () => {
        const attrs = {
          ...base,
          urls: [ldap.ldapsUrl],
          insecure_tls: true,
          certificates: [ldap.pki.otherCaPem],
        };
        expectOk(await ldapAuthenticate(attrs, "alice", users.alice.password));
      });

      await t.step("a URL failing TLS falls through to the next URL", async () => {
        const attrs = {
          ...base,
          urls: [ldap.downUrl, ldap.ldapUrl.replace("ldap://", "ldaps://"), ldap.ldapsUrl],
          certificates: ca,
        };
        expectOk(await ldapAuthenticate(attrs, "carol", users.carol.password));
      });
    } finally {
      await ldap.stop();
    }
  },
});

Deno.test({
  name: "ldapAuthenticate presents client_certificate when slapd demands one",
  ignore,
  async fn(t) {
    const ldap = await startSlapd({ requireClientCertificate: true });
    try {
      const base = { discover_dn: true, user_dn: baseDn, user_attr: "uid", certificates: [ldap.pki.caPem] };
      const withCert = {
        ...base,
        client_certificate: ldap.pki.clientCertPem,
        client_certificate_key: ldap.pki.clientKeyPem,
      };

      await t.step("ldaps and StartTLS succeed with the client certificate", async () => {
        expectOk(
          await ldapAuthenticate({ ...withCert, urls: [ldap.ldapsUrl] }, "alice", users.alice.password),
        );
        expectOk(
          await ldapAuthenticate(
            { ...withCert, urls: [ldap.ldapUrl], start_tls: true },
            "bob",
            users.bob.password,
          ),
        );
      });

      await t.step("the same login without a client certificate is refused by the server", async () => {
        expectFailure(
          await ldapAuthenticate({ ...base, urls: [ldap.ldapsUrl] }, "alice", "alice-password"),
          "directory_error",
        );
      });
    } finally {
      await ldap.stop();
    }
  },
});
