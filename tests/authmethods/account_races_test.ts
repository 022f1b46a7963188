// Account writes racing each other and their parents: revocations (account delete, set-password) racing logins
// and logouts give every token exactly one AuthTokenDeleted event; password writes on one version let one win;
// a method delete racing them all leaves no account or token behind.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type AuthFixture, Client, withAuthServer } from "./helpers.ts";

const password = "user-password-1";
const chainsPerRound = 4;

/** Creates a password account with the shared password; fails the test unless it is created. */
async function createAccount(f: AuthFixture, loginName: string, methodId = f.primaryMethodId) {
  const created = await f.admin.post("/v1/accounts", {
    auth_method_id: methodId,
    attributes: { login_name: loginName, password },
  });
  assertEquals(created.status, 200);
  return created;
}

/** Calls `call` after `ms` milliseconds (0: at once, not after a timer). */
async function later<T>(ms: number, call: () => Promise<T>): Promise<T> {
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
  return await call();
}

function authenticate(f: AuthFixture, loginName: string, pw: string, methodId = f.primaryMethodId) {
  return f.anon.post(`/v1/auth-methods/${methodId}:authenticate`, {
    attributes: { login_name: loginName, password: pw },
  });
}

async function login(f: AuthFixture, loginName: string, pw: string): Promise<string> {
  const r = await authenticate(f, loginName, pw);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return r.body.attributes.token;
}

/** AuthTokenDeleted events per token id, from the whole event log. */
async function deletionEvents(f: AuthFixture): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const { line } of f.server.server.data.log.read(1)) {
    for (const e of JSON.parse(line).Events as Array<{ Type: string; Key: string }>) {
      if (e.Type === "AuthTokenDeleted") counts.set(e.Key, (counts.get(e.Key) ?? 0) + 1);
    }
  }
  return counts;
}

/** Logs in and, the moment the token arrives, logs it out; returns the token id (undefined: login refused). */
async function loginThenLogout(f: AuthFixture, loginName: string, pw: string): Promise<string | undefined> {
  const r = await authenticate(f, loginName, pw);
  if (r.status !== 200) {
    assertEquals(r.status, 401, JSON.stringify(r.body));
    return undefined;
  }
  const { id, token } = r.body.attributes;
  const out = await new Client(f.server.url, token).delete(`/v1/auth-tokens/${id}`);
  // 401: the revocation committed first, so the token no longer authenticates its own logout.
  assert([200, 401, 404].includes(out.status), `logout answered ${out.status}`);
  return id;
}

/**
 * Runs `chainsPerRound` login-then-logout chains of `loginName` while `revoke` runs after `delayMs`; returns
 * the ids of the tokens the logins minted.
 */
async function raceRound(
  f: AuthFixture,
  loginName: string,
  pw: string,
  delayMs: number,
  revoke: () => Promise<void>,
): Promise<string[]> {
  const chains = Array.from({ length: chainsPerRound }, () => loginThenLogout(f, loginName, pw));
  await new Promise((r) => setTimeout(r, delayMs));
  await revoke();
  return (await Promise.all(chains)).filter((id): id is string => id !== undefined);
}

async function assertOneEventEach(f: AuthFixture, tokenIds: string[]): Promise<void> {
  const counts = await deletionEvents(f);
  const wrong = tokenIds.filter((id) => counts.get(id) !== 1).map((id) => `${id}: ${counts.get(id) ?? 0}`);
  assertEquals(wrong, [], `deletion events per token, of ${tokenIds.length} tokens`);
  for (const id of tokenIds) {
    assertEquals((await f.admin.get(`/v1/auth-tokens/${id}`)).status, 404, `token ${id} survived`);
  }
}

Deno.test("logouts racing their account's delete give each token exactly one deletion event", () =>
  withAuthServer(async (f) => {
    const minted: string[] = [];
    for (let round = 0; round < 40; round++) {
      const loginName = `leaver${round}`;
      const created = await createAccount(f, loginName);
      minted.push(
        ...await raceRound(f, loginName, password, round % 4, async () => {
          const r = await f.admin.delete(`/v1/accounts/${created.body.id}`);
          assertEquals(r.status, 200, JSON.stringify(r.body));
        }),
      );
    }
    await assertOneEventEach(f, minted);
  }));

Deno.test("logouts racing set-password give each token exactly one deletion event", () =>
  withAuthServer(async (f) => {
    const created = await createAccount(f, "resetter");
    let version = created.body.version;
    let current = password;
    const minted: string[] = [];
    for (let round = 0; round < 40; round++) {
      const next = `next-password-${round}`;
      minted.push(
        ...await raceRound(f, "resetter", current, round % 4, async () => {
          const r = await f.admin.post(`/v1/accounts/${created.body.id}:set-password`, {
            version,
            password: next,
          });
          assertEquals(r.status, 200, JSON.stringify(r.body));
          version = r.body.version;
        }),
      );
      current = next;
    }
    await assertOneEventEach(f, minted);
  }));

Deno.test("set-password and change-password racing on one version: exactly one wins", () =>
  withAuthServer(async (f) => {
    const created = await createAccount(f, "twice");
    const id = created.body.id;
    let current = password;
    for (let round = 0; round < 12; round++) {
      const owner = new Client(f.server.url, await login(f, "twice", current));
      const version = (await f.admin.get(`/v1/accounts/${id}`)).body.version;
      const [set, changed] = await Promise.all([
        // The set-password hashes once, the change-password twice: starting the set-password a timer tick
        // later in odd rounds lets each win some rounds.
        later(
          round % 2,
          () => f.admin.post(`/v1/accounts/${id}:set-password`, { version, password: `set-${round}-pw` }),
        ),
        owner.post(`/v1/accounts/${id}:change-password`, {
          version,
          current_password: current,
          new_password: `changed-${round}-pw`,
        }),
      ]);
      // The loser: a version conflict, the old password no longer matching (403), or the owner's token already
      // revoked by the set-password (401).
      const statuses = [set.status, changed.status];
      assertEquals(statuses.filter((s) => s === 200).length, 1, `round ${round}: ${statuses}`);
      for (const s of statuses) assert([200, 401, 403, 409].includes(s), `round ${round}: ${statuses}`);
      const after = (await f.admin.get(`/v1/accounts/${id}`)).body;
      assertEquals(after.version, version + 1, `round ${round}: one write per version`);
      const winner = set.status === 200 ? `set-${round}-pw` : `changed-${round}-pw`;
      const loser = set.status === 200 ? `changed-${round}-pw` : `set-${round}-pw`;
      assertEquals(
        (await authenticate(f, "twice", loser)).status,
        401,
        `round ${round}: loser's password works`,
      );
      current = winner;
      // A set-password revokes every token; a change-password keeps the caller's.
      assertEquals((await owner.get(`/v1/accounts/${id}`)).status, set.status === 200 ? 401 : 200);
    }
  }));

Deno.test("a method delete racing set-password, change-password, account delete and logout leaves nothing behind", () =>
  withAuthServer(async (f) => {
    const minted: string[] = [];
    for (let round = 0; round < 8; round++) {
      const m = await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
      assertEquals(m.status, 200);
      const accounts = [];
      for (const name of ["setter", "changer", "deleted", "leaver"]) {
        const a = await createAccount(f, name, m.body.id);
        const r = await authenticate(f, name, password, m.body.id);
        assertEquals(r.status, 200);
        minted.push(r.body.attributes.id);
        accounts.push({
          id: a.body.id,
          version: a.body.version,
          holder: new Client(f.server.url, r.body.attributes.token),
          tokenId: r.body.attributes.id,
        });
      }
      const [setter, changer, deleted, leaver] = accounts as [
        typeof accounts[0],
        typeof accounts[0],
        typeof accounts[0],
        typeof accounts[0],
      ];
      // Staggered starts, so across rounds each racer lands before, during and after the delete.
      const racers = [
        () =>
          f.admin.post(`/v1/accounts/${setter.id}:set-password`, {
            version: setter.version,
            password: "another-password",
          }),
        () =>
          changer.holder.post(`/v1/accounts/${changer.id}:change-password`, {
            version: changer.version,
            current_password: password,
            new_password: "another-password",
          }),
        () => f.admin.delete(`/v1/accounts/${deleted.id}`),
        () => leaver.holder.delete(`/v1/auth-tokens/${leaver.tokenId}`),
      ].map((call, i) => later((round + i) % 4, call));
      const removed = await later(1, () => f.admin.delete(`/v1/auth-methods/${m.body.id}`));
      assertEquals(removed.status, 200);
      // Each racer committed before the delete (200) or found its account or token gone (404, 401).
      for (const r of await Promise.all(racers)) {
        assert([200, 401, 404].includes(r.status), `round ${round}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      for (const a of accounts) {
        assertEquals(
          (await f.admin.get(`/v1/accounts/${a.id}`)).status,
          404,
          `round ${round}: account survived`,
        );
        assertEquals(
          (await f.admin.get(`/v1/auth-tokens/${a.tokenId}`)).status,
          404,
          `round ${round}: token survived`,
        );
      }
    }
    await assertOneEventEach(f, minted);
  }));

/**
 * Sends `method path` with `body` held back until `meanwhile` has run: the handler has loaded the account
 * (from the path) and waits for the body while `meanwhile` deletes what it depends on.
 */
async function withBodyAfter(
  f: AuthFixture,
  token: string,
  method: string,
  path: string,
  body: unknown,
  meanwhile: () => Promise<void>,
): Promise<number> {
  let send!: (text: string) => void;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      send = (text) => {
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      };
    },
  });
  const response = fetch(f.server.url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: stream,
  });
  // The request is under way (headers sent, account loaded) before the delete; the body follows it.
  await new Promise((r) => setTimeout(r, 50));
  await meanwhile();
  send(JSON.stringify(body));
  const r = await response;
  await r.body?.cancel();
  return r.status;
}

Deno.test("password and account writes whose body arrives after their method's delete answer 404", () =>
  withAuthServer(async (f) => {
    const writes = [
      (id: string, version: number) => ({
        method: "POST",
        path: `/v1/accounts/${id}:set-password`,
        body: { version, password: "another-password" },
      }),
      (id: string, version: number) => ({
        method: "POST",
        path: `/v1/accounts/${id}:change-password`,
        body: { version, current_password: password, new_password: "another-password" },
      }),
      (id: string, version: number) => ({
        method: "PATCH",
        path: `/v1/accounts/${id}`,
        body: { version, attributes: { login_name: "renamed" } },
      }),
    ];
    for (const write of writes) {
      const m = await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
      assertEquals(m.status, 200);
      const a = await createAccount(f, "orphan", m.body.id);
      const owner = await authenticate(f, "orphan", password, m.body.id);
      assertEquals(owner.status, 200);
      const { method, path, body } = write(a.body.id, a.body.version);
      // change-password is the owner's; the others are the admin's.
      const token = path.endsWith(":change-password") ? owner.body.attributes.token : f.admin.token!;
      const status = await withBodyAfter(f, token, method, path, body, async () => {
        assertEquals((await f.admin.delete(`/v1/auth-methods/${m.body.id}`)).status, 200);
      });
      // change-password: the owner's token went with the method, but the caller was resolved before.
      assertEquals(status, 404, `${method} ${path}`);
    }
  }));
