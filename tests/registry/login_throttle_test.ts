// The registry's login and two-factor throttles under concurrency: an attempt counts while it is being
// checked, so guesses sent all at once get no more real answers than the limit allows.

import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, type Fixture, registryTest } from "./helpers.ts";
import { tally } from "../helpers/statuses.ts";

const login = (f: Fixture, login: string, password: string, extra: Record<string, unknown> = {}) =>
  f.api.post("/api/v1/authenticate", { user: { login, password }, ...extra });

registryTest("concurrent wrong passwords for one login get at most the limit of 401s", {
  WHARF_REGISTRY_LOGIN_FAILURES: "5",
}, async (f) => {
  await createUser(f, "alice");
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => login(f, i % 2 ? "alice" : "ALICE ", `wrong-${i}`)),
  );
  assertEquals(tally(answers), { 401: 5, 429: 35 });
  for (const a of answers.filter((a) => a.status === 429)) {
    assert(Number(a.headers.get("Retry-After")) > 0, a.text);
    assertEquals(a.body.success, false);
  }
  // The limit was reached: the right password waits for the window too (docs/security.md#throttles).
  assertEquals((await login(f, "alice", "alice-password")).status, 429);
});

registryTest("concurrent wrong passwords over many logins from one IP get at most 50 401s", async (f) => {
  const answers = await Promise.all(
    Array.from({ length: 90 }, (_, i) => login(f, `nobody-${i}`, "wrong-password")),
  );
  assertEquals(tally(answers), { 401: 50, 429: 40 });
});

registryTest("concurrent right passwords all get tokens, beyond the limit too", {
  WHARF_REGISTRY_LOGIN_FAILURES: "3",
}, async (f) => {
  await createUser(f, "alice");
  const answers = await Promise.all(Array.from({ length: 12 }, () => login(f, "alice", "alice-password")));
  assertEquals(tally(answers), { 200: 12 });
});

registryTest("a right password sent with the limit of wrong ones is answered as if they came one by one", {
  WHARF_REGISTRY_LOGIN_FAILURES: "4",
}, async (f) => {
  await createUser(f, "alice");
  const wrong = Array.from({ length: 4 }, (_, i) => login(f, "alice", `wrong-${i}`));
  const right = login(f, "alice", "alice-password");
  const answers = await Promise.all(wrong);
  // Every wrong guess got its real answer; the right one either came before the fourth failure or after it.
  assertEquals(tally(answers), { 401: 4 });
  assert([200, 429].includes((await right).status));
  assertEquals((await login(f, "alice", "alice-password")).status, 429);
});

registryTest("concurrent wrong two-factor codes get at most ten 406s", async (f) => {
  const a = await f.api.post("/api/v1/admin/users", {
    user: {
      username: "alice",
      email: "alice@example.com",
      password: "alice-password",
      mobile: "+15551231234",
    },
  }, { token: f.admin });
  assertEquals(a.status, 200, a.text);
  const on = await f.api.put("/api/v1/admin/users/alice", { two_factor_enabled: true }, { token: f.admin });
  assertEquals(on.status, 200, on.text);
  const answers = await Promise.all(
    Array.from({ length: 30 }, () => login(f, "alice", "alice-password", { two_factor: { code: "abcdef" } })),
  );
  assertEquals(tally(answers), { 406: 10, 429: 20 });
});

registryTest("wrong passwords by username and by email count against one user", {
  WHARF_REGISTRY_LOGIN_FAILURES: "4",
}, async (f) => {
  await createUser(f, "alice");
  const names = ["alice", "alice@example.com", "ALICE", " Alice@Example.com "];
  const statuses = [];
  for (let i = 0; i < 8; i++) statuses.push((await login(f, names[i % names.length]!, `wrong-${i}`)).status);
  assertEquals(statuses, [401, 401, 401, 401, 429, 429, 429, 429]);
  assertEquals((await login(f, "alice@example.com", "alice-password")).status, 429);
});
