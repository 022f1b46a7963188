// A stale set-password or change-password answers 409 and a duplicate account create 400 even while the
// password-hashing queue is full: they are refused before any hashing, not with the queue's 503.

import { assertEquals } from "../helpers/assert.ts";
import { type ApiResponse, type AuthFixture, withAuthServer } from "./helpers.ts";

// Real (Boundary default) argon2 cost: two hashes at a time, 64 queued, so 150 at once overflow the queue.
const realArgon2 = { WHARF_ARGON2_TIME: "3", WHARF_ARGON2_MEMORY_KIB: "65536" };
const burst = 150;

/** Creates a password account in the primary method (asserting the 200): its id and version. */
async function createAccount(f: AuthFixture, loginName: string, password: string) {
  const created = await f.admin.post("/v1/accounts", {
    auth_method_id: f.primaryMethodId,
    attributes: { login_name: loginName, password },
  });
  assertEquals(created.status, 200);
  return { id: created.body.id as string, version: created.body.version as number };
}

/** How many of `answers` had each status. */
function statusCounts(answers: ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

Deno.test("stale set-password and change-password and duplicate creates are answered 409/400 with the hash queue full", () =>
  withAuthServer(async (f) => {
    const created = await createAccount(f, "carol", "carol-password-1");
    const id = created.id;
    const stale = created.version + 1;
    const answers = await Promise.all([
      ...Array.from(
        { length: burst },
        () => f.admin.post(`/v1/accounts/${id}:set-password`, { version: stale, password: "new-password-1" }),
      ),
      ...Array.from({ length: burst }, () =>
        f.admin.post(`/v1/accounts/${id}:change-password`, {
          version: stale,
          current_password: "carol-password-1",
          new_password: "new-password-2",
        })),
      ...Array.from({ length: burst }, () =>
        f.admin.post("/v1/accounts", {
          auth_method_id: f.primaryMethodId,
          attributes: { login_name: "carol", password: "other-password-1" },
        })),
    ]);
    const statuses = (from: number) => statusCounts(answers.slice(from, from + burst));
    assertEquals(statuses(0), { 409: burst }, "set-password");
    assertEquals(statuses(burst), { 409: burst }, "change-password");
    assertEquals(statuses(2 * burst), { 400: burst }, "duplicate create");
    assertEquals(answers[2 * burst]!.body.details.request_fields[0].name, "attributes.login_name");
  }, realArgon2));

// wharf issue #22 item 8: 150 simultaneous set-password calls with the account's current version. The calls of
// one account are taken in turn before the version check and the hash, so the first hashes and commits and the
// other 149 see the bumped version: 409 without hashing, none of them a 503 from the full hashing queue.
Deno.test("150 simultaneous set-password calls with the current version: one 200, 149 × 409, no 503", () =>
  withAuthServer(async (f) => {
    const { id, version: current } = await createAccount(f, "dave", "dave-password-1");
    const answers = await Promise.all(
      Array.from(
        { length: burst },
        (_, i) =>
          f.admin.post(`/v1/accounts/${id}:set-password`, {
            version: current,
            password: `new-password-${i}`,
          }),
      ),
    );
    assertEquals(statusCounts(answers), { 200: 1, 409: burst - 1 });
    const winner = answers.find((a) => a.status === 200)!;
    assertEquals(winner.body.version, current + 1);
    for (const a of answers.filter((a) => a.status === 409)) assertEquals(a.body.kind, "Aborted");
    // The winner's password is the one stored: it logs in.
    const index = answers.indexOf(winner);
    const login = await f.anon.post(`/v1/auth-methods/${f.primaryMethodId}:authenticate`, {
      attributes: { login_name: "dave", password: `new-password-${index}` },
    });
    assertEquals(login.status, 200);
  }, realArgon2));
