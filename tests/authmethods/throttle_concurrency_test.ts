// Login throttles under concurrency: an attempt counts while it is being checked (argon2id or the
// directory), so guesses sent all at once get no more 401s than the lockout threshold allows.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type ApiResponse, type AuthFixture, makeUser, withAuthServer } from "./helpers.ts";
import { slapdSkipReason, users } from "../fixtures/slapd.ts";
import { directBindAttrs, withLdapMethod } from "./ldap_helpers.ts";
import { tally } from "../helpers/statuses.ts";

const auth = (f: AuthFixture, loginName: string, password: string) =>
  f.anon.post(`/v1/auth-methods/${f.primaryMethodId}:authenticate`, {
    attributes: { login_name: loginName, password },
  });

function assertThrottled(answers: ApiResponse[]): void {
  for (const a of answers.filter((a) => a.status === 429)) {
    assertEquals(a.body.kind, "ResourceExhausted");
    assert(Number(a.headers.get("Retry-After")) > 0);
  }
}

Deno.test("concurrent wrong passwords for one name get at most the threshold of 401s", () =>
  withAuthServer(async (f) => {
    await makeUser(f, "alice");
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => auth(f, "alice", `wrong-${i}`)));
    assertEquals(tally(answers), { 401: 5, 429: 35 });
    assertThrottled(answers);
    // Locked: the right password is refused as well (docs/security.md#throttles).
    assertEquals((await auth(f, "alice", "user-password-1")).status, 429);
  }));

Deno.test("concurrent wrong passwords over many names from one IP get at most the IP threshold of 401s", () =>
  withAuthServer(async (f) => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => auth(f, `ghost-${i}`, "wrong")));
    assertEquals(tally(answers), { 401: 8, 429: 32 });
    assertThrottled(answers);
  }, { WHARF_IP_LOCKOUT_THRESHOLD: "8" }));

Deno.test("concurrent right passwords all get tokens, more of them than the thresholds", () =>
  withAuthServer(async (f) => {
    await makeUser(f, "alice");
    const answers = await Promise.all(Array.from({ length: 12 }, () => auth(f, "alice", "user-password-1")));
    assertEquals(tally(answers), { 200: 12 });
  }, { WHARF_LOGIN_LOCKOUT_THRESHOLD: "3", WHARF_IP_LOCKOUT_THRESHOLD: "4" }));

Deno.test("a right password sent with the threshold of wrong ones is answered as if they came one by one", () =>
  withAuthServer(async (f) => {
    await makeUser(f, "alice");
    const wrong = Array.from({ length: 5 }, (_, i) => auth(f, "alice", `wrong-${i}`));
    const right = auth(f, "alice", "user-password-1");
    assertEquals(tally(await Promise.all(wrong)), { 401: 5 });
    // Before the fifth failure the right password succeeds and resets the count (so no lock follows);
    // after it the name is locked, for the right password too.
    const status = (await right).status;
    assert(status === 200 || status === 429, String(status));
    assertEquals((await auth(f, "alice", "user-password-1")).status, status);
  }));

Deno.test({
  name: "concurrent wrong passwords against an LDAP method get at most the threshold of 401s",
  ignore: slapdSkipReason !== undefined,
  fn: () =>
    withLdapMethod(directBindAttrs, async (_api, login) => {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => login("alice", `wrong-${i}`)));
      assertEquals(tally(answers), { 401: 5, 429: 25 });
      assertEquals((await login("alice", users.alice.password)).status, 429);
      // Another name is not locked by alice's failures.
      assertEquals((await login("bob", users.bob.password)).status, 200);
    }),
});
