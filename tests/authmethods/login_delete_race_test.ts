// Logins racing the delete of their auth method (or its org): no account, user or token may outlive the method.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type AuthFixture, Client, withAuthServer } from "./helpers.ts";

const accountsPerRound = 12;
const rounds = 6;

/** A password method in `scopeId` with `accountsPerRound` accounts; returns the method id. */
async function methodWithAccounts(f: AuthFixture, scopeId: string, round: number): Promise<string> {
  const m = await f.admin.post("/v1/auth-methods", { scope_id: scopeId, type: "password" });
  assertEquals(m.status, 200);
  for (let i = 0; i < accountsPerRound; i++) {
    const a = await f.admin.post("/v1/accounts", {
      auth_method_id: m.body.id,
      attributes: { login_name: `racer${round}-${i}`, password: "user-password-1" },
    });
    assertEquals(a.status, 200);
  }
  return m.body.id;
}

/** Every login at once, the delete after `delayMs`; then no token or user of a successful login may remain. */
async function raceLoginsWithDelete(
  f: AuthFixture,
  methodId: string,
  round: number,
  deletePath: string,
  delayMs: number,
): Promise<void> {
  const logins = Array.from(
    { length: accountsPerRound },
    (_, i) =>
      f.anon.post(`/v1/auth-methods/${methodId}:authenticate`, {
        attributes: { login_name: `racer${round}-${i}`, password: "user-password-1" },
      }),
  );
  await new Promise((r) => setTimeout(r, delayMs));
  const deleted = await f.admin.delete(deletePath);
  assertEquals(deleted.status, 200);
  for (const r of await Promise.all(logins)) {
    if (r.status !== 200) {
      // A login that lost the race fails as a login against a missing method would.
      assert([404, 401].includes(r.status), `round ${round}: login answered ${r.status}`);
      continue;
    }
    const { id, user_id, account_id } = r.body.attributes;
    assertEquals(
      (await f.admin.get(`/v1/auth-tokens/${id}`)).status,
      404,
      `round ${round}: token ${id} survived`,
    );
    assertEquals((await f.admin.get(`/v1/users/${user_id}`)).status, 404, `round ${round}: user survived`);
    assertEquals(
      (await f.admin.get(`/v1/accounts/${account_id}`)).status,
      404,
      `round ${round}: account survived`,
    );
    const holder = new Client(f.server.url, r.body.attributes.token);
    assertEquals(
      (await holder.get(`/v1/auth-tokens/${id}`)).status,
      401,
      `round ${round}: token still usable`,
    );
  }
}

Deno.test("logins racing their method's delete leave no token, user or account behind", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < rounds; round++) {
      const methodId = await methodWithAccounts(f, "global", round);
      await raceLoginsWithDelete(f, methodId, round, `/v1/auth-methods/${methodId}`, round * 2);
    }
  }));

Deno.test("logins racing their org's delete leave no token, user or account behind", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < rounds; round++) {
      const org = await f.admin.post("/v1/scopes", { scope_id: "global", name: `race-org-${round}` });
      assertEquals(org.status, 200);
      const methodId = await methodWithAccounts(f, org.body.id, round);
      await raceLoginsWithDelete(f, methodId, round, `/v1/scopes/${org.body.id}`, round * 2);
    }
  }));
