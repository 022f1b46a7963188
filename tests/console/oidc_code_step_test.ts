// The two-factor code step after a console OIDC sign-in over HTTP, one server for the file (docs/identity.md#oidc-
// sign-in): a step whose person lost the account, or whose method left the sign-in methods, sends no code and
// signs nobody in; a completed step's cookies, copied and replayed from another client, are refused.

import { assertEquals } from "../helpers/assert.ts";
import { type OidcTestUser, oidcUsers } from "../fixtures/oidc_provider.ts";
import { WebClient } from "./helpers.ts";
import { startConsoleOidc } from "./oidc_http_sign_in.ts";

/** The per-user interval between SMS code requests (docs/security.md#throttles), and a second of slack. */
const smsIntervalMs = 31_000;
/** What the code page says of each refusal. */
const reasons = {
  accountGone: "This sign-in with Corp SSO expired or was used already; start again.",
  stepUsed: "No sign-in waits for a two-factor code in this browser (it expired or was used already)",
  methodWithdrawn: "Corp SSO is not offered for sign-in now.",
};
const mobiles = { alice: "+15550001234", bob: "+15550002345", carol: "+15550003456" };

Deno.test("console OIDC code step: withdrawn sign-ins and replayed steps refused", async (t) => {
  const { srv, api, admin, authAdmin, oidc, signIn, signedInAs, stop } = await startConsoleOidc();
  try {
    /** A browser at the code step of `user`'s sign-in, the code form loaded. */
    const atCodeStep = async (user: OidcTestUser): Promise<WebClient> => {
      const { web, answer } = await signIn(user);
      assertEquals([answer.status, answer.headers.get("location")], [303, "/ui/login/code"], answer.text);
      assertEquals((await web.get("/ui/login/code")).status, 200);
      return web;
    };
    /** The SMS codes texted to `mobile` so far, oldest first. */
    const textsTo = async (mobile: string): Promise<string[]> => {
      const outbox = await Deno.readTextFile(`${srv.dataDir}/outbox/sms.ndjson`).catch(() => "");
      return outbox.split("\n").filter(Boolean).map((line) => JSON.parse(line))
        .filter((m) => m.to === mobile).map((m) => m.code);
    };
    /** "Text me a code" on the step: its status and how many texts it sent. */
    const textMeACode = async (web: WebClient, mobile: string) => {
      const before = (await textsTo(mobile)).length;
      const sent = await web.postForm("/ui/login/code", { send_sms: "1" });
      return { status: sent.status, texts: (await textsTo(mobile)).length - before };
    };
    /** Posts the newest code texted to `mobile` on the step: the status and who the browser is signed in as. */
    const postNewestCode = async (web: WebClient, mobile: string) => {
      const done = await web.postForm("/ui/login/code", { code: (await textsTo(mobile)).at(-1)! });
      return { status: done.status, signedInAs: await signedInAs(web) };
    };
    /**
     * The whole step tried once more: the code page (its status, whether it gives `reason`), "Text me a code",
     * then the newest code texted to `mobile` posted.
     */
    const tryStep = async (web: WebClient, mobile: string, reason: string) => {
      const shown = await web.get("/ui/login/code");
      const page = { status: shown.status, why: shown.text.includes(reason) };
      return { page, send: await textMeACode(web, mobile), post: await postNewestCode(web, mobile) };
    };
    /** What tryStep sees of a refused step. */
    const refused = {
      page: { status: 401, why: true },
      send: { status: 401, texts: 0 },
      post: { status: 401, signedInAs: undefined },
    };

    // Each person provisioned by a first sign-in, then SMS two-factor on (a number of its own each).
    for (const name of ["alice", "bob", "carol"] as const) {
      assertEquals(await signedInAs((await signIn(oidcUsers[name])).web), name);
      const on = await api.put(`/api/v1/admin/users/${name}`, {
        user: { mobile: mobiles[name], two_factor_enabled: true },
      }, { token: admin });
      assertEquals(on.status, 200, on.text);
    }
    // Three steps waiting, each with a code texted while the sign-in still stood; the second requests of each
    // user come after the per-user interval, which the steps below share.
    const alice = await atCodeStep(oidcUsers.alice);
    const bob = await atCodeStep(oidcUsers.bob);
    const carol = await atCodeStep(oidcUsers.carol);
    for (const [web, name] of [[alice, "alice"], [bob, "bob"], [carol, "carol"]] as const) {
      assertEquals(await textMeACode(web, mobiles[name]), { status: 200, texts: 1 });
    }
    const intervalOver = Date.now() + smsIntervalMs;
    const untilIntervalOver = () => new Promise((r) => setTimeout(r, Math.max(0, intervalOver - Date.now())));

    // alice's cookies (the sealed step and the pre-login cookie) and form token, copied before her sign-in ends.
    const copied = { cookies: new Map(alice.cookies), csrf: alice.csrf };
    assertEquals(await postNewestCode(alice, mobiles.alice), { status: 303, signedInAs: "alice" });

    await t.step(
      "the person's account deleted at the code step: no code sent, nobody signed in",
      async () => {
        const accounts = await authAdmin.get(`/v1/accounts?auth_method_id=${oidc}`);
        const account = (accounts.body.items as { id: string; attributes: { email?: string } }[])
          .find((a) => a.attributes.email === oidcUsers.bob.email)!;
        assertEquals((await authAdmin.delete(`/v1/accounts/${account.id}`)).status, 200);
        await untilIntervalOver();
        // Before: the code page (200), a text sent (200), then that code signed bob in (303 to /).
        assertEquals(await tryStep(bob, mobiles.bob, reasons.accountGone), refused);
      },
    );

    await t.step("a completed step's cookies replayed from another client: refused", async () => {
      await untilIntervalOver();
      const replay = new WebClient(srv.url);
      for (const [name, value] of copied.cookies) replay.cookies.set(name, value);
      replay.csrf = copied.csrf;
      // Before: the code page (200), a text sent (200), and its code opened a second session as alice (303).
      assertEquals(await tryStep(replay, mobiles.alice, reasons.stepUsed), refused);
    });

    await t.step("a user's sixth waiting step replaces the oldest (5 kept per user)", async () => {
      const steps: WebClient[] = [];
      for (let i = 0; i < 6; i++) steps.push(await atCodeStep(oidcUsers.alice));
      const pages = await Promise.all(steps.map(async (web) => (await web.get("/ui/login/code")).status));
      assertEquals(pages, [401, 200, 200, 200, 200, 200]);
    });

    await t.step(
      "the method taken out of the sign-in methods and made inactive: nobody signed in",
      async () => {
        const put = await api.put("/api/v2/admin/sign-in-methods", { methods: ["registry"] }, {
          token: admin,
        });
        assertEquals(put.status, 200, put.text);
        const method = await authAdmin.get(`/v1/auth-methods/${oidc}`);
        const inactive = await authAdmin.post(`/v1/auth-methods/${oidc}:change-state`, {
          version: method.body.version,
          attributes: { state: "inactive" },
        });
        assertEquals(inactive.status, 200, JSON.stringify(inactive.body));
        await untilIntervalOver();
        // Before: the code page (200), a text sent (200), then that code signed carol in (303 to /).
        assertEquals(await tryStep(carol, mobiles.carol, reasons.methodWithdrawn), refused);
      },
    );
  } finally {
    await stop();
  }
});
