// Replacing the second factor (wharf issue #22, item 3): with an authenticator app active, a session alone may
// not enrol another one (the old app must keep working), wrong current codes count against the two-factor
// throttle, and an administrator's reset of someone's two-factor is an admin-only action with an audit event.

import * as OTPAuth from "otpauth";
import { assert, assertEquals } from "../helpers/assert.ts";
import { createUser, type Fixture, startRegistry } from "../registry/helpers.ts";
import { rootSecret, subscribe } from "../events/stream_helpers.ts";
import { WebClient } from "./helpers.ts";

const STEP_MS = 30_000;

function appOf(secret: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
}

/** The code of an explicit time step (the current one is `step()`): each login needs an unused, newer step. */
const codeAt = (app: OTPAuth.TOTP, step: number) => app.generate({ timestamp: step * STEP_MS });
const step = () => Math.floor(Date.now() / STEP_MS);

/** A six-digit code that is none of the app's codes around now. */
function wrongCode(app: OTPAuth.TOTP): string {
  const valid = new Set([-1, 0, 1].map((d) => codeAt(app, step() + d)));
  for (let n = 0;; n++) {
    const code = String(n).padStart(6, "0");
    if (!valid.has(code)) return code;
  }
}

/** alice with an authenticator app enrolled by the admin API and two-factor on; her app. */
async function aliceWithApp(f: Fixture): Promise<OTPAuth.TOTP> {
  await createUser(f, "alice");
  const enrol = await f.api.post("/api/v1/admin/users/alice/totp", undefined, { token: f.admin });
  assertEquals(enrol.status, 200, enrol.text);
  const app = appOf(enrol.body.secret);
  const confirm = await f.api.post("/api/v1/admin/users/alice/totp/confirm", {
    code: codeAt(app, step() - 1),
  }, { token: f.admin });
  assertEquals(confirm.status, 200, confirm.text);
  const on = await f.api.put("/api/v1/admin/users/alice", { user: { two_factor_enabled: true } }, {
    token: f.admin,
  });
  assertEquals(on.status, 200, on.text);
  return app;
}

/** alice signed in to the console with her app's current code. */
async function signedInAlice(f: Fixture, app: OTPAuth.TOTP, at: number): Promise<WebClient> {
  const web = new WebClient(f.srv.url);
  assertEquals((await web.signIn("alice", "alice-password", codeAt(app, at))).status, 303);
  return web;
}

const apiLogin = (f: Fixture, code: string) =>
  f.api.post("/api/v1/authenticate", {
    user: { login: "alice", password: "alice-password" },
    two_factor: { code },
  });

const shownKey = (text: string) => /Key: <span class="secret">([A-Z2-7]+)</.exec(text)?.[1];

/** With the session alone: asks the security page for an authenticator app (a 303), then reads the page again. */
async function enrolWithSessionOnly(web: WebClient) {
  await web.get("/ui/settings/security");
  const enrol = await web.postForm("/ui/settings/security/totp", {});
  assertEquals(enrol.status, 303);
  const page = await web.get("/ui/settings/security");
  return { enrol, page, key: shownKey(page.text) };
}

async function withRegistry(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await startRegistry({
    WHARF_RATE_LIMIT_RPS: "0",
    WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
    WHARF_EVENTS_HEARTBEAT_MS: "50",
  });
  try {
    await fn(f);
  } finally {
    await f.stop();
  }
}

Deno.test("a session alone cannot replace an active authenticator app: the old app keeps signing in", async () => {
  await withRegistry(async (f) => {
    const oldApp = await aliceWithApp(f);
    const now = step();
    const web = await signedInAlice(f, oldApp, now);
    // The exact scenario: enrol with the session only, then confirm with a code of the new key.
    const { enrol, page, key: newKey } = await enrolWithSessionOnly(web);
    let confirmed: number | undefined;
    let newLogin: number | undefined;
    if (newKey) {
      const newApp = appOf(newKey);
      confirmed =
        (await web.postForm("/ui/settings/security/totp/confirm", { code: newApp.generate() })).status;
      newLogin = (await apiLogin(f, codeAt(newApp, now + 1))).status;
    }
    const oldLogin = (await apiLogin(f, codeAt(oldApp, now + 1))).status;
    assertEquals(
      { enrol: enrol.status, confirmed, oldLogin, newLogin },
      { enrol: 303, confirmed: undefined, oldLogin: 200, newLogin: undefined },
    );
    assert(newKey === undefined, "no new key is shown");
    assert(page.text.includes("A current code from your authenticator app is required"), page.text);

    // A wrong current code: refused the same way, nothing pending.
    const wrong = await web.postForm("/ui/settings/security/totp", { code: wrongCode(oldApp) });
    assertEquals(wrong.status, 303);
    const refused = await web.get("/ui/settings/security");
    assert(refused.text.includes("Invalid two-factor code"), refused.text);
    assertEquals(shownKey(refused.text), undefined);
  });
});

Deno.test("with a current code of the active app it is replaced; the old one stops at the confirmation", async () => {
  await withRegistry(async (f) => {
    const oldApp = await aliceWithApp(f);
    const now = step();
    const web = await signedInAlice(f, oldApp, now);
    const page = await web.get("/ui/settings/security");
    assert(page.text.includes("Replace the authenticator app"), page.text);
    assertEquals((await web.postForm("/ui/settings/security/totp", { code: oldApp.generate() })).status, 303);
    const newKey = shownKey((await web.get("/ui/settings/security")).text);
    assert(newKey, "the new key is shown");
    const newApp = appOf(newKey);
    // Until the confirmation the old app still signs in. (The confirmation records the new app's step, `now`.)
    assertEquals((await apiLogin(f, codeAt(oldApp, now + 1))).status, 200);
    assertEquals(
      (await web.postForm("/ui/settings/security/totp/confirm", { code: codeAt(newApp, now) })).status,
      303,
    );
    assert((await web.get("/ui/settings/security")).text.includes("Two-factor authentication is on."));
    assertEquals((await apiLogin(f, codeAt(oldApp, now + 1))).status, 406);
    assertEquals((await apiLogin(f, codeAt(newApp, now + 1))).status, 200);
  });
});

Deno.test("wrong current codes on the security page count against the two-factor throttle", async () => {
  await withRegistry(async (f) => {
    const app = await aliceWithApp(f);
    const now = step();
    const web = await signedInAlice(f, app, now);
    await web.get("/ui/settings/security");
    const bad = wrongCode(app);
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const path = i % 2 === 0 ? "/ui/settings/security/totp" : "/ui/settings/security/totp/remove";
      assertEquals((await web.postForm(path, { code: bad })).status, 303);
      const text = (await web.get("/ui/settings/security")).text;
      outcomes.push(text.includes("Invalid two-factor code") ? "invalid" : shownKey(text) ? "enrolled" : "?");
    }
    assertEquals(outcomes, Array(10).fill("invalid"));
    // The eleventh try is throttled, and so is a login with the right code (the same per-user limit).
    assertEquals((await web.postForm("/ui/settings/security/totp", { code: app.generate() })).status, 303);
    const throttled = await web.get("/ui/settings/security");
    assert(throttled.text.includes("Rate limit exceeded"), throttled.text);
    assertEquals(shownKey(throttled.text), undefined);
    assertEquals((await apiLogin(f, codeAt(app, now + 1))).status, 429);
  });
});

Deno.test("an administrator's reset of someone's two-factor is admin-only and an audit event", async () => {
  await withRegistry(async (f) => {
    await aliceWithApp(f);
    await createUser(f, "mallory");
    const stream = await subscribe(f.srv.url, "index=1&topic=User");
    try {
      // Not an admin: neither the API nor the console page may reset it.
      const mallory = await f.api.login("mallory", "mallory-password");
      assertEquals((await f.api.delete("/api/v1/admin/users/alice/totp", { token: mallory })).status, 403);
      const web = new WebClient(f.srv.url);
      assertEquals((await web.signIn("mallory", "mallory-password")).status, 303);
      await web.postForm("/ui/admin/users/alice/reset-2fa", {});
      const still = await f.api.get("/api/v1/admin/users/alice", { token: f.admin });
      assertEquals(still.body.two_factor, { enabled: true, delivery_methods: ["app"] });
      // The admin's reset through the console.
      const admin = new WebClient(f.srv.url);
      assertEquals((await admin.signIn("admin", "admin-password-1")).status, 303);
      await admin.get("/ui/admin");
      assertEquals((await admin.postForm("/ui/admin/users/alice/reset-2fa", {})).status, 303);
      const reset = await f.api.get("/api/v1/admin/users/alice", { token: f.admin });
      assertEquals(reset.body.two_factor, { enabled: false, delivery_methods: [] });
      const frames = await stream.dataUntilQuiet(1000);
      const events = frames.flatMap((frame) => frame.Events ?? []).map((e) => [e.Type, e.Key, e.Payload]);
      const setUp = ["totp-enrolment-started", "totp-confirmed", "two-factor-on"];
      assertEquals(events, [
        ...setUp.map((change) => [
          "UserTwoFactorChanged",
          "alice",
          { User: { username: "alice", actor: "admin", change } },
        ]),
        ["UserTwoFactorChanged", "alice", {
          User: { username: "alice", actor: "admin", change: "totp-removed" },
        }],
      ]);
    } finally {
      await stream.close();
    }
  });
});

Deno.test("with two-factor by SMS, a session alone cannot add an authenticator app; a code sent by SMS can", async () => {
  await withRegistry(async (f) => {
    await createUser(f, "bob", { mobile: "+15551231234" });
    const web = new WebClient(f.srv.url);
    assertEquals((await web.signIn("bob", "bob-password")).status, 303);
    // Two-factor by SMS turned on after the sign-in: the session stays.
    const on = await f.api.put("/api/v1/admin/users/bob", { user: { two_factor_enabled: true } }, {
      token: f.admin,
    });
    assertEquals(on.status, 200, on.text);
    const { page, key } = await enrolWithSessionOnly(web);
    let confirmed: number | undefined;
    let appLogin: number | undefined;
    if (key) {
      const app = appOf(key);
      confirmed = (await web.postForm("/ui/settings/security/totp/confirm", { code: codeAt(app, step()) }))
        .status;
      appLogin = (await f.api.post("/api/v1/authenticate", {
        user: { login: "bob", password: "bob-password" },
        two_factor: { code: codeAt(app, step() + 1) },
      })).status;
    }
    assertEquals({ key, confirmed, appLogin }, { key: undefined, confirmed: undefined, appLogin: undefined });
    assert(page.text.includes("A current two-factor code is required"), page.text);
    const methods = await f.api.get("/api/v1/admin/users/bob", { token: f.admin });
    assertEquals(methods.body.two_factor, { enabled: true, delivery_methods: ["sms"] });

    // "Text me a code" on the security page, then the code sent.
    assertEquals((await web.postForm("/ui/settings/security/sms-code", {})).status, 303);
    assert(
      (await web.get("/ui/settings/security")).text.includes("A code was sent to the number ending in 1234"),
    );
    const outbox = await Deno.readTextFile(`${f.srv.dataDir}/outbox/sms.ndjson`);
    const code = JSON.parse(outbox.trim().split("\n").at(-1)!).code as string;
    assertEquals((await web.postForm("/ui/settings/security/totp", { code })).status, 303);
    assert(shownKey((await web.get("/ui/settings/security")).text), "the new key is shown");
  });
});
