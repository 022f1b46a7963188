// LDAP login names as the directory matches them: spellings slapd accepts for one entry (case, leading and
// trailing spaces) share one throttle key, one account and one user, and never rewrite the account's dn.

import { assertEquals } from "../helpers/assert.ts";
import { peopleDn, slapdSkipReason, startSlapd, users } from "../fixtures/slapd.ts";
import type { AuthServer } from "../fixtures/wharf_auth.ts";
import { withAuthServer } from "./helpers.ts";
import { directBindAttrs, withLdapMethod } from "./ldap_helpers.ts";

const ignore = slapdSkipReason !== undefined;
const spellings = ["alice", "ALICE", " alice", "alice  ", "Alice"];

async function countUsers(api: AuthServer): Promise<number> {
  const r = await api.call("GET", "/v1/users?scope_id=global");
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return (r.body.items as unknown[] | undefined)?.length ?? 0;
}

for (
  const [mode, attributes] of [
    ["direct bind", directBindAttrs],
    ["discover_dn", { discover_dn: true, ...directBindAttrs }],
  ] as const
) {
  Deno.test({
    name: `LDAP name spellings of one entry log into one account and one user (${mode})`,
    ignore,
    fn: () =>
      withLdapMethod(attributes, async (api, login) => {
        const usersBefore = await countUsers(api);
        const seen = [];
        for (const name of spellings) {
          const r = await login(name, users.alice.password);
          assertEquals(r.status, 200, `${JSON.stringify(name)}: ${JSON.stringify(r.body)}`);
          const attrs = r.body.attributes as Record<string, string>;
          seen.push(`${attrs.account_id} ${attrs.user_id}`);
        }
        assertEquals(new Set(seen).size, 1, seen.join("\n"));
        assertEquals(await countUsers(api), usersBefore + 1);
        const accountId = seen[0]!.split(" ")[0];
        const account = await api.call("GET", `/v1/accounts/${accountId}`);
        const acct = account.body.attributes as Record<string, unknown>;
        assertEquals(acct.dn, users.alice.dn);
        assertEquals(acct.login_name, "alice");
      }),
  });
}

Deno.test({
  name: "a login in another case does not rewrite the LDAP account's dn",
  ignore,
  fn: () =>
    withLdapMethod(directBindAttrs, async (api, login) => {
      for (const name of ["alice", "ALICE"]) {
        const r = await login(name, users.alice.password);
        assertEquals(r.status, 200, JSON.stringify(r.body));
        const accountId = (r.body.attributes as Record<string, string>).account_id;
        const account = await api.call("GET", `/v1/accounts/${accountId}`);
        assertEquals((account.body.attributes as Record<string, unknown>).dn, users.alice.dn, name);
      }
    }),
});

Deno.test({
  name: "wrong passwords over LDAP name spellings of one entry share one throttle key",
  ignore,
  fn: () =>
    withLdapMethod(directBindAttrs, async (api, login) => {
      const statuses = [];
      for (let i = 0; i < 20; i++) {
        statuses.push((await login(spellings[i % spellings.length]!, `wrong-${i}`)).status);
      }
      assertEquals(statuses, [...Array(5).fill(401), ...Array(15).fill(429)]);
      for (const name of spellings) assertEquals((await login(name, users.alice.password)).status, 429);
      // Another entry has its own key.
      assertEquals((await login("bob", users.bob.password)).status, 200);
      assertEquals(await countUsers(api) >= 1, true);
    }),
});

Deno.test({
  name: "an LDAP account keyed by login name (before DN keys) is adopted by its entry's next login",
  ignore,
  async fn() {
    const ldap = await startSlapd();
    try {
      await withAuthServer(async (f) => {
        const created = await f.admin.post("/v1/auth-methods", {
          scope_id: "global",
          type: "ldap",
          name: "directory",
          attributes: { state: "active-public", urls: [ldap.ldapUrl], user_dn: peopleDn, user_attr: "uid" },
        });
        assertEquals(created.status, 200, JSON.stringify(created.body));
        const login = (name: string) =>
          f.anon.post(`/v1/auth-methods/${created.body.id}:authenticate`, {
            attributes: { login_name: name, password: users.alice.password },
          });
        const first = await login("alice");
        assertEquals(first.status, 200, JSON.stringify(first.body));
        const { account_id: accountId, user_id: userId } = first.body.attributes;
        // Give the account the key an older release gave it: the lowercased login name.
        const store = f.server.server.data.store;
        await store.transact([], () => {
          const cur = store.get<Record<string, unknown>>("auth/accounts", accountId)!;
          return {
            writes: [{ collection: "auth/accounts", id: accountId, doc: { ...cur.doc, key: "alice" } }],
          };
        });
        const again = await login(" Alice");
        assertEquals(again.status, 200, JSON.stringify(again.body));
        assertEquals([again.body.attributes.account_id, again.body.attributes.user_id], [accountId, userId]);
        assertEquals(store.get<{ key: string }>("auth/accounts", accountId)!.doc.key, users.alice.dn);
        assertEquals((await login(" ALICE ")).body.attributes.account_id, accountId);
      });
    } finally {
      await ldap.stop();
    }
  },
});
