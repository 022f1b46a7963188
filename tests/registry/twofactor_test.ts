// Two-factor login: SMS codes through the outbox and a webhook, TOTP enrolment and reuse
// (docs/registry.md#getting-a-token, docs/security.md#changing-the-second-factor).

import * as OTPAuth from "otpauth";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { loggedLines } from "../helpers/stored.ts";
import { createUser, type Fixture, registryTest, startRegistry } from "./helpers.ts";

const creds = { login: "alice", password: "alice-password" };
const REQUEST_CODE = "/api/v1/two-factor/request-code";

/** alice with an SMS number and two-factor on: her logins need a code. */
const createSmsUser = (f: Fixture) =>
  createUser(f, "alice", { mobile: "+15551231234", two_factor_enabled: true });

/** Asks for an SMS code for `user` (alice unless given). */
const requestSmsCode = (f: Fixture, user: Record<string, string> = creds) =>
  f.api.post(REQUEST_CODE, { two_factor: { delivery_method: "sms" }, user });

/** alice's login with `code` as her two-factor code. */
const loginWithCode = (f: Fixture, code: unknown) =>
  f.api.post("/api/v1/authenticate", { user: creds, two_factor: { code } });

/** Runs `fn` with a registry whose SMS webhook is a local server answering `answer`; stops both after. */
function withSmsWebhook(
  answer: (request: Request) => Response | Promise<Response>,
  env: Record<string, string>,
  fn: (f: Fixture) => Promise<void>,
): Promise<void> {
  const startHook = () => {
    const hook = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, answer);
    return Promise.resolve({ port: hook.addr.port, stop: () => hook.shutdown() });
  };
  return withStarted(startHook, (hook) =>
    withStarted(
      () => startRegistry({ WHARF_SMS_WEBHOOK: `http://127.0.0.1:${hook.port}/sms`, ...env }),
      fn,
    ));
}

/** A stored batch that changes nothing: no event and no document. */
function emptyBatch(line: string): boolean {
  return Object.entries(JSON.parse(line)).every(([key, value]) =>
    key === "Index" || (Array.isArray(value) && value.length === 0)
  );
}

async function outboxLines(f: Fixture): Promise<Array<{ to: string; code: string; created_at: string }>> {
  try {
    const text = await Deno.readTextFile(`${f.srv.dataDir}/outbox/sms.ndjson`);
    return text.trim().split("\n").map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

registryTest("two-factor login without a code answers 406 with the delivery methods", async (f) => {
  await createSmsUser(f);
  const a = await loginWithCode(f, null);
  assertEquals(a.status, 406);
  assertEquals(a.body, {
    errors: ["Two-factor authentication code required!"],
    success: false,
    two_factor: { default_delivery_method: "sms", delivery_methods: ["sms"] },
  });
  const bad = await f.api.post("/api/v1/authenticate", {
    user: { ...creds, password: "wrong-pass" },
    two_factor: { code: "1" },
  });
  assertEquals(bad.status, 401);
  const wrong = await loginWithCode(f, "000000");
  assertEquals(wrong.status, 406);
  assertEquals(wrong.body.errors, ["Invalid or expired two-factor code!"]);
});

registryTest("an SMS code goes to the outbox once, works once and cannot be reused", async (f) => {
  await createSmsUser(f);
  const r = await requestSmsCode(f);
  assertEquals(r.status, 200, r.text);
  assertEquals(r.body, { two_factor: { obfuscated_destination: "SMS number ending in 1234" } });
  const lines = await outboxLines(f);
  assertEquals(lines.length, 1);
  assertEquals(lines[0]!.to, "+15551231234");
  assertMatch(lines[0]!.code, /^[0-9]{6}$/);
  const info = await Deno.stat(`${f.srv.dataDir}/outbox/sms.ndjson`);
  assertEquals(info.mode! & 0o777, 0o600);
  const code = lines[0]!.code;
  const ok = await loginWithCode(f, code);
  assertEquals(ok.status, 200, ok.text);
  const again = await loginWithCode(f, code);
  assertEquals(again.status, 406);
  assertEquals(again.body.errors, ["Invalid or expired two-factor code!"]);
});

registryTest(
  "an SMS code is refused after WHARF_2FA_CODE_TTL",
  { WHARF_2FA_CODE_TTL: "200ms" },
  async (f) => {
    await createSmsUser(f);
    await requestSmsCode(f);
    const code = (await outboxLines(f))[0]!.code;
    await new Promise((r) => setTimeout(r, 300));
    const late = await loginWithCode(f, code);
    assertEquals(late.status, 406);
  },
);

registryTest(
  "request-code checks fields, credentials, method, enrolment and frequency in order",
  async (f) => {
    await createSmsUser(f);
    await createUser(f, "bob");
    assertEquals((await f.api.post(REQUEST_CODE, { user: creds })).status, 422);
    const badCreds = await requestSmsCode(f, { login: "alice", password: "nopenope" });
    assertEquals(badCreds.status, 401);
    const app = await f.api.post(REQUEST_CODE, { two_factor: { delivery_method: "app" }, user: creds });
    assertEquals(app.status, 422);
    assertEquals(app.body.errors, ["Only 'sms' codes can be requested"]);
    const off = await requestSmsCode(f, { login: "bob", password: "bob-password" });
    assertEquals(off.status, 422);
    assertEquals((await requestSmsCode(f)).status, 200);
    const again = await requestSmsCode(f);
    assertEquals(again.status, 429);
    assert(Number(again.headers.get("Retry-After")) >= 1);
  },
);

Deno.test("WHARF_SMS_WEBHOOK receives the code as a JSON POST instead of the outbox", () => {
  const received: Array<{ auth: string | null; body: Record<string, string> }> = [];
  const collect = async (req: Request) => {
    received.push({ auth: req.headers.get("Authorization"), body: await req.json() });
    return new Response("ok");
  };
  return withSmsWebhook(collect, { WHARF_SMS_WEBHOOK_TOKEN: "hook-secret" }, async (f) => {
    await createSmsUser(f);
    const r = await requestSmsCode(f);
    assertEquals(r.status, 200, r.text);
    assertEquals(received.length, 1);
    assertEquals(received[0]!.auth, "Bearer hook-secret");
    assertEquals(received[0]!.body.to, "+15551231234");
    assertEquals((await outboxLines(f)).length, 0);
    const ok = await loginWithCode(f, received[0]!.body.code);
    assertEquals(ok.status, 200);
  });
});

Deno.test("a failing SMS webhook gives 500 with the errors shape", () =>
  withSmsWebhook(() => new Response("no", { status: 503 }), {}, async (f) => {
    await createSmsUser(f);
    const r = await requestSmsCode(f);
    assertEquals(r.status, 500);
    assertEquals(r.body.success, false);
  }));

/** wharf_store_commit_failures_total on the server (WHARF_METRICS_PUBLIC=1). */
async function commitFailures(f: Fixture): Promise<number> {
  const text = await (await fetch(`${f.srv.url}/v1/metrics?format=prometheus`)).text();
  const m = /^wharf_store_commit_failures_total (\S+)$/m.exec(text);
  assert(m, "wharf_store_commit_failures_total in the metrics");
  return Number(m[1]);
}

registryTest("TOTP enrolment and confirmation enable app codes that log in once", {
  WHARF_METRICS_PUBLIC: "1",
}, async (f) => {
  await createUser(f, "alice");
  const enrol = await f.api.post("/api/v1/admin/users/alice/totp", undefined, { token: f.admin });
  assertEquals(enrol.status, 200, enrol.text);
  assertMatch(
    enrol.body.otpauth_url,
    /^otpauth:\/\/totp\/wharf:alice\?secret=[A-Z2-7]+&issuer=wharf&algorithm=SHA1&digits=6&period=30$/,
  );
  const totp = new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(enrol.body.secret),
    digits: 6,
    period: 30,
  });
  const badConfirm = await f.api.post("/api/v1/admin/users/alice/totp/confirm", { code: "000000" }, {
    token: f.admin,
  });
  assertEquals(badConfirm.status, totp.generate() === "000000" ? 200 : 422);
  // Confirm with the previous step's code so that the current one is still unused for the login.
  const previous = totp.generate({ timestamp: Date.now() - 30_000 });
  const confirm = await f.api.post("/api/v1/admin/users/alice/totp/confirm", { code: previous }, {
    token: f.admin,
  });
  assertEquals(confirm.status, 200, confirm.text);
  assertEquals(confirm.body.two_factor.delivery_methods, ["app"]);
  const on = await f.api.put("/api/v1/admin/users/alice", { two_factor_enabled: true }, { token: f.admin });
  assertEquals(on.status, 200, on.text);
  const needed = await f.api.post("/api/v1/authenticate", { user: creds });
  assertEquals(needed.body.two_factor, { default_delivery_method: "app", delivery_methods: ["app"] });
  const code = totp.generate();
  const before = (await loggedLines(f.srv)).length;
  const failuresBefore = await commitFailures(f);
  const ok = await loginWithCode(f, code);
  assertEquals(ok.status, 200, ok.text);
  // A right app code is checked under the user's lock but commits nothing of its own: no empty batch, and no
  // failed commit in the metrics (the old code threw a sentinel through the store's transact: +1).
  assertEquals((await loggedLines(f.srv)).slice(before).filter(emptyBatch), []);
  assertEquals(await commitFailures(f), failuresBefore);
  const reuse = await loginWithCode(f, code);
  assertEquals(reuse.status, 406);
  const user = await f.api.get("/api/v1/admin/users/alice", { token: f.admin });
  assert(!JSON.stringify(user.body).includes(enrol.body.secret));
});

registryTest("enabling two-factor without a mobile or an app is refused with 422", async (f) => {
  await createUser(f, "alice");
  const r = await f.api.put("/api/v1/admin/users/alice", { user: { two_factor_enabled: true } }, {
    token: f.admin,
  });
  assertEquals(r.status, 422);
});

registryTest("ten wrong two-factor codes within 15 minutes are throttled with 429", async (f) => {
  await createSmsUser(f);
  for (let i = 0; i < 10; i++) {
    const wrong = await loginWithCode(f, "abcdef");
    assertEquals(wrong.status, 406);
  }
  const limited = await loginWithCode(f, "abcdef");
  assertEquals(limited.status, 429);
  assert(limited.headers.get("Retry-After"));
});

registryTest("five wrong codes void the current SMS code", async (f) => {
  await createSmsUser(f);
  await requestSmsCode(f);
  const code = (await outboxLines(f))[0]!.code;
  const wrong = code === "111111" ? "222222" : "111111";
  for (let i = 0; i < 5; i++) {
    assertEquals((await loginWithCode(f, wrong)).status, 406);
  }
  const voided = await loginWithCode(f, code);
  assertEquals(voided.status, 406);
});
