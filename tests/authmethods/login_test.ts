// Integration tests of password login, tokens, cookies, logout, throttling and login events.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  adminPassword,
  type AuthFixture,
  Client,
  fastEnv,
  makeUser,
  startAuthServer,
  withAuthServer,
} from "./helpers.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { HashingQueue, PasswordHasher } from "../../lib/password_hashing.ts";
import { ApiError } from "../../lib/errors.ts";

const auth = (f: AuthFixture, body: unknown, c: Client = f.anon) =>
  c.post(`/v1/auth-methods/${f.primaryMethodId}:authenticate`, body);

async function events(
  f: AuthFixture,
): Promise<Array<{ Topic: string; Type: string; Key: string; Payload: Record<string, unknown> }>> {
  const out = [];
  for await (const { line } of f.server.server.data.log.read(1)) out.push(...JSON.parse(line).Events);
  return out;
}

Deno.test("password login issues an at_ token that authenticates later calls", () =>
  withAuthServer(async (f) => {
    const r = await auth(f, { attributes: { login_name: "admin", password: adminPassword } });
    assertEquals(r.status, 200);
    assertEquals(r.body.command, "login");
    assert(!("type" in r.body));
    const a = r.body.attributes;
    assertMatch(a.token, /^at_[0-9A-Za-z]{10}_s1[1-9A-HJ-NP-Za-km-z]+$/);
    assertEquals(a.token.slice(0, 13), a.id);
    assertEquals(a.auth_method_id, f.primaryMethodId);
    assertEquals(a.authorized_actions, ["read:self", "delete:self"]);
    assertEquals(a.scope.id, "global");
    for (
      const k of [
        "user_id",
        "account_id",
        "created_time",
        "updated_time",
        "approximate_last_used_time",
        "expiration_time",
      ]
    ) {
      assert(k in a, k);
    }
    const days = (Date.parse(a.expiration_time) - Date.parse(a.created_time)) / 86_400_000;
    assertEquals(Math.round(days), 7);
    const me = new Client(f.server.url, a.token);
    const read = await me.get(`/v1/auth-tokens/${a.id}`);
    assertEquals(read.status, 200);
    assert(!("token" in read.body));
    assertEquals(read.body.id, a.id);
    const lower = await me.call("GET", `/v1/auth-tokens/${a.id}`, undefined, {
      Authorization: `bearer ${a.token}`,
    });
    assertEquals(lower.status, 200, "the scheme is case-insensitive");
    const typed = await auth(f, {
      type: "TOKEN",
      attributes: { login_name: "admin", password: adminPassword },
    });
    assertEquals(typed.body.type, "TOKEN");
    const legacy = await auth(f, {
      token_type: "token",
      attributes: { login_name: "admin", password: adminPassword },
    });
    assertEquals(legacy.status, 200);
    const ev = await events(f);
    const issued = ev.filter((e) => e.Type === "AuthTokenIssued");
    assertEquals(issued.length, 4, "three logins here plus the fixture's");
    assertEquals(Object.keys(issued[1]!.Payload.AuthToken as object).sort(), [
      "account_id",
      "auth_method_id",
      "client_ip",
      "delivery",
      "id",
      "user_id",
    ]);
    assert(!JSON.stringify(ev).includes(a.token));
  }));

Deno.test("password login fails identically for a wrong password and an unknown name", () =>
  withAuthServer(async (f) => {
    const wrong = await auth(f, { attributes: { login_name: "admin", password: "not-the-password" } });
    const unknown = await auth(f, { attributes: { login_name: "nobody", password: "not-the-password" } });
    assertEquals(wrong.status, 401);
    assertEquals(wrong.body, { kind: "Unauthenticated", message: "Unable to authenticate." });
    assertEquals(unknown.status, wrong.status);
    assertEquals(unknown.body, wrong.body);
    const noPassword = await f.admin.post("/v1/accounts", {
      auth_method_id: f.primaryMethodId,
      attributes: { login_name: "nopass" },
    });
    assertEquals(noPassword.status, 200);
    assertEquals(
      (await auth(f, { attributes: { login_name: "nopass", password: "whatever-1" } })).body,
      wrong.body,
    );
    const failed = (await events(f)).filter((e) => e.Type === "AuthenticationFailed");
    assertEquals(failed.length, 3);
    assertEquals(failed[0]!.Topic, "AuthToken");
    assertEquals(failed[0]!.Payload, {
      AuthToken: {
        auth_method_id: f.primaryMethodId,
        login_name: "admin",
        reason: "invalid_credentials",
        client_ip: "127.0.0.1",
      },
    });
    assert(!JSON.stringify(failed).includes("not-the-password"));
  }));

Deno.test("authenticate validates command, type, token_type and attributes", () =>
  withAuthServer(async (f) => {
    const cases: Array<[unknown, string]> = [
      [{ attributes: { password: "x" } }, "attributes.login_name"],
      [{ attributes: { login_name: "admin", password: "" } }, "attributes.password"],
      [{ command: "start", attributes: { login_name: "admin", password: "x" } }, "command"],
      [{ command: "token", attributes: {} }, "command"],
      [{ type: "jwt", attributes: { login_name: "admin", password: "x" } }, "type"],
      [{ token_type: 5, attributes: { login_name: "admin", password: "x" } }, "token_type"],
      [
        { type: "token", token_type: "Cookie", attributes: { login_name: "admin", password: "x" } },
        "token_type",
      ],
      [{ attributes: "x" }, "attributes"],
    ];
    for (const [body, field] of cases) {
      const r = await auth(f, body);
      assertEquals(r.status, 400, JSON.stringify(body));
      assertEquals(r.body.details.request_fields[0].name, field);
    }
    assertEquals(
      (await auth(f, { command: "start", attributes: {} })).body.details.request_fields[0].description,
      "Invalid command for this auth method type.",
    );
    assertEquals(
      (await f.anon.post("/v1/auth-methods/ampw_1234567890:authenticate", {
        attributes: { login_name: "a", password: "b" },
      })).status,
      404,
    );
    assertEquals((await f.anon.post("/v1/auth-methods/bad:authenticate", {})).status, 400);
    assertEquals(
      (await f.anon.call("POST", `/v1/auth-methods/${f.primaryMethodId}:authenticate`, "{")).status,
      400,
    );
    const same = await auth(f, {
      type: "cookie",
      token_type: "COOKIE",
      attributes: { login_name: "admin", password: adminPassword },
    });
    assertEquals(same.status, 200);
  }));

Deno.test("cookie delivery splits the token into two cookies that only work together", () =>
  withAuthServer(async (f) => {
    const r = await auth(f, { type: "cookie", attributes: { login_name: "admin", password: adminPassword } });
    assertEquals(r.status, 200);
    assertEquals(r.body.type, "cookie");
    assert(!("token" in r.body.attributes));
    const cookies = r.headers.getSetCookie();
    assertEquals(cookies.length, 2);
    const js = cookies.find((c) => c.startsWith("wt-js-token-cookie="))!;
    const http = cookies.find((c) => c.startsWith("wt-http-token-cookie="))!;
    assert(!js.includes("HttpOnly") && http.includes("HttpOnly"));
    for (const c of [js, http]) {
      assert(c.includes("Path=/") && c.includes("SameSite=Strict"), c);
      assertMatch(c, /Max-Age=\d{6}/);
      assert(!c.includes("Secure"), "plain HTTP on loopback leaves Secure out");
    }
    const jsValue = js.split(";")[0]!.split("=")[1]!;
    const httpValue = http.split(";")[0]!.split("=")[1]!;
    assertEquals(jsValue.length, Math.floor((jsValue + httpValue).length / 2));
    assertMatch(jsValue + httpValue, /^at_/);
    const both = await f.anon.call("GET", `/v1/auth-tokens/${r.body.attributes.id}`, undefined, {
      Cookie: `wt-js-token-cookie=${jsValue}; wt-http-token-cookie=${httpValue}`,
    });
    assertEquals(both.status, 200);
    const one = await f.anon.call("GET", `/v1/auth-tokens/${r.body.attributes.id}`, undefined, {
      Cookie: `wt-http-token-cookie=${httpValue}`,
    });
    assertEquals(one.status, 401);
    const out = await f.anon.call("DELETE", `/v1/auth-tokens/${r.body.attributes.id}`, undefined, {
      Cookie: `wt-js-token-cookie=${jsValue}; wt-http-token-cookie=${httpValue}`,
    });
    assertEquals(out.status, 200);
    assert(out.headers.getSetCookie().every((c) => c.includes("Max-Age=0")));
  }));

Deno.test("logout deletes the token; other users' tokens are forbidden", () =>
  withAuthServer(async (f) => {
    const { client: dave } = await makeUser(f, "dave");
    const { client: erin } = await makeUser(f, "erin");
    const daveTokenId = dave.token!.slice(0, 13);
    assertEquals((await erin.get(`/v1/auth-tokens/${daveTokenId}`)).status, 403);
    assertEquals((await erin.delete(`/v1/auth-tokens/${daveTokenId}`)).status, 403);
    assertEquals(
      (await erin.get("/v1/auth-tokens/at_1234567890")).status,
      403,
      "absent ids are 403 for non-admins",
    );
    assertEquals((await f.admin.get("/v1/auth-tokens/at_1234567890")).status, 404);
    assertEquals((await f.admin.get(`/v1/auth-tokens/${daveTokenId}`)).status, 200);
    assertEquals((await f.anon.get(`/v1/auth-tokens/${daveTokenId}`)).status, 401);
    const out = await dave.delete(`/v1/auth-tokens/${daveTokenId}`);
    assertEquals(out.status, 200);
    assertEquals(out.body, {});
    assertEquals((await dave.get(`/v1/auth-tokens/${daveTokenId}`)).status, 401);
    const deleted = (await events(f)).filter((e) => e.Type === "AuthTokenDeleted");
    assertEquals(deleted.length, 1);
    assertEquals(deleted[0]!.Payload.AuthToken, {
      id: daveTokenId,
      user_id: (deleted[0]!.Payload.AuthToken as { user_id: string }).user_id,
      auth_method_id: f.primaryMethodId,
      reason: "logout",
    });
  }));

Deno.test("the sixth failure in the window is 429 with Retry-After even with the right password", () =>
  withAuthServer(async (f) => {
    for (let i = 0; i < 5; i++) {
      assertEquals(
        (await auth(f, { attributes: { login_name: "admin", password: `wrong-${i}` } })).status,
        401,
      );
    }
    const locked = await auth(f, { attributes: { login_name: "admin", password: adminPassword } });
    assertEquals(locked.status, 429);
    assertEquals(locked.body.kind, "ResourceExhausted");
    assertMatch(locked.body.message, /^Too many failed authentication attempts; try again in \d+ seconds\.$/);
    const retry = Number(locked.headers.get("Retry-After"));
    assert(retry > 800 && retry <= 900, String(retry));
    const unknownLocked = [];
    for (let i = 0; i < 6; i++) {
      unknownLocked.push((await auth(f, { attributes: { login_name: "ghost", password: "x" } })).status);
    }
    assertEquals(unknownLocked, [401, 401, 401, 401, 401, 429], "unknown names are throttled too");
    const throttled = (await events(f)).filter((e) =>
      (e.Payload.AuthToken as { reason?: string } | undefined)?.reason === "throttled"
    );
    assertEquals(
      throttled.length,
      2,
      "each throttled login is an event (the address's first 20 are in full here)",
    );
  }, { WHARF_FAILED_LOGIN_EVENTS_PER_ADDRESS: "20" }));

Deno.test("the per-IP lockout stops a spray over many names", () =>
  withAuthServer(async (f) => {
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await auth(f, { attributes: { login_name: `spray${i}`, password: "x" } })).status);
    }
    assertEquals(statuses, [401, 401, 401, 429]);
    const r = await auth(f, { attributes: { login_name: "admin", password: adminPassword } });
    assertEquals(r.status, 429);
    assert(r.headers.get("Retry-After"));
  }, { WHARF_IP_LOCKOUT_THRESHOLD: "3" }));

Deno.test("a good login upgrades a hash made with older argon2 parameters", async () => {
  const f = await startAuthServer();
  const dir = f.server.dataDir;
  const accountId = (await f.admin.get(`/v1/accounts?auth_method_id=${f.primaryMethodId}`)).body.items[0].id;
  const hashOf = (s: TestServer) =>
    (s.server.data.store.get("auth/accounts", accountId)!.doc as { password_hash: string }).password_hash;
  assertMatch(hashOf(f.server), /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
  await f.server.stop({ keepData: true });
  const server = await startTestServer({ ...f.server.env, ...fastEnv, WHARF_ARGON2_TIME: "2" }, dir);
  try {
    const r = await new Client(server.url).post(`/v1/auth-methods/${f.primaryMethodId}:authenticate`, {
      attributes: { login_name: "admin", password: adminPassword },
    });
    assertEquals(r.status, 200);
    assertMatch(hashOf(server), /^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
    assertEquals(server.announced, [], "a restart announces nothing");
  } finally {
    await server.stop();
  }
});

Deno.test("the hash queue refuses work beyond its bound with 503", async () => {
  const queue = new HashingQueue({ concurrency: 1, maxWaiting: 1 });
  const hasher = new PasswordHasher({ timeCost: 1, memoryKib: 1024, threads: 1 }, queue);
  const results = await Promise.allSettled([hasher.hash("a"), hasher.hash("b"), hasher.hash("c")]);
  assertEquals(results.map((r) => r.status), ["fulfilled", "fulfilled", "rejected"]);
  const err = (results[2] as PromiseRejectedResult).reason;
  assert(err instanceof ApiError && err.status === 503 && err.message === "Server is busy, retry later.");
  assertEquals([queue.peakRunning, queue.refused, queue.completed], [1, 1, 2]);
  assert(await hasher.verify(await hasher.hash("pw-12345"), "pw-12345"));
  assert(!await hasher.verify(undefined, "pw-12345"));
});

Deno.test("inactive LDAP methods refuse login with FailedPrecondition", () =>
  withAuthServer(async (f) => {
    const m = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: { urls: ["ldap://127.0.0.1:1"] },
    });
    const r = await f.anon.post(`/v1/auth-methods/${m.body.id}:authenticate`, {
      attributes: { login_name: "x", password: "y" },
    });
    assertEquals(r.status, 400);
    assertEquals(r.body, {
      kind: "FailedPrecondition",
      message: "Cannot authenticate against an inactive LDAP auth method",
    });
    const o = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { client_id: "c", client_secret: "s", api_url_prefix: "https://x.example" },
    });
    const s = await f.anon.post(`/v1/auth-methods/${o.body.id}:authenticate`, { command: "start" });
    assertEquals(s.body, {
      kind: "FailedPrecondition",
      message: "Cannot start authentication against an inactive OIDC auth method",
    });
    const down = await f.admin.patch(`/v1/auth-methods/${m.body.id}`, {
      version: 1,
      attributes: { state: "active-public" },
    });
    assertEquals(down.status, 200);
    const unreachable = await f.anon.post(`/v1/auth-methods/${m.body.id}:authenticate`, {
      attributes: { login_name: "x", password: "y" },
    });
    assertEquals(unreachable.status, 401);
    const failed = (await events(f)).filter((e) => e.Type === "AuthenticationFailed");
    const reasons = failed.map((e) => (e.Payload.AuthToken as { reason: string }).reason);
    assertEquals(reasons, ["inactive", "inactive", "directory_error"]);
  }));

Deno.test("an unknown login name takes about as long as a wrong password (both run argon2id)", () =>
  withAuthServer(async (f) => {
    const time = async (loginName: string) => {
      const t = performance.now();
      const r = await auth(f, { attributes: { login_name: loginName, password: "wrong-password" } });
      assertEquals(r.status, 401);
      return performance.now() - t;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await time("admin"));
      unknown.push(await time(`nobody-${i}`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[3]!;
    const ratio = median(unknown) / median(known);
    // Loose bounds: only a skipped hash (a ratio near 0) should fail this on a loaded machine.
    assert(ratio > 0.33 && ratio < 3, `unknown/known median ratio ${ratio.toFixed(2)}`);
  }, {
    WHARF_ARGON2_TIME: "2",
    WHARF_ARGON2_MEMORY_KIB: "16384",
    WHARF_LOGIN_LOCKOUT_THRESHOLD: "100",
    WHARF_IP_LOCKOUT_THRESHOLD: "100",
  }));
