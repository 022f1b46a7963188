// "Sign in with NAME" on the console in a real Chromium against a real OpenID provider (oidc-provider):
// the oidc sign-in method's login with the console's callback, the provisioned registry user (username from
// the e-mail's local part, the e-mail from the account), the attempt bound to the browser that started it
// (docs/identity.md#oidc-sign-in).

import * as OTPAuth from "otpauth";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { fastEnv } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "../registry/helpers.ts";
import { offerOidcSignIn } from "../registry/oidc_sign_in_setup.ts";
import { browserTest, clickAndWait, fill, launchBrowser, WebClient } from "./helpers.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";

browserTest(
  "console: Sign in with Corp SSO provisions the registry user through the OIDC sign-in method",
  async (t) => {
    // The server's log at debug level: no OIDC code, state, nonce, PKCE value, cookie or token in any line.
    const logLines: string[] = [];
    const srv = await startTestServer(
      { ...fastEnv, WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD },
      undefined,
      { logLines },
    );
    // The groups claim in the ID token, for a filter over /token/groups.
    const op = await startOidcProvider({ redirectUris: [`${srv.url}${callbackPath}`], idTokenClaims: true });
    const { browser, close } = await launchBrowser();
    try {
      const { api, admin, authAdmin, primary, oidc } = await offerOidcSignIn(srv.url, op, [
        "email",
        "profile",
        "groups",
      ]);

      const page = await browser.newPage();
      // Every URL the browser asked for (the provider's authorize URL, wharf's callback with code and state).
      const requested: string[] = [];
      page.on("request", (r) => requested.push(r.url()));
      const cookiesSeen = new Set<string>();
      const keepCookies = async () => {
        for (const c of await page.cookies(srv.url)) cookiesSeen.add(c.value);
      };
      const main = async () =>
        await page.$eval("main", (m) => (m as unknown as { innerText: string }).innerText);
      const signInWithSso = async () => {
        await page.goto(`${srv.url}/ui/login`, { waitUntil: "load" });
        await clickAndWait(page, `a[href='/ui/login/oidc/${oidc}']`);
        // The provider's login and consent pages (once it knows the browser, it sends it straight back).
        if (await page.$("input[name=password]")) {
          assertEquals(new URL(page.url()).origin, new URL(op.issuer).origin);
          await fill(page, "input[name=login]", oidcUsers.alice.login);
          await fill(page, "input[name=password]", oidcUsers.alice.password);
          await clickAndWait(page, "button[type=submit]");
        }
        if (await page.$("button[value=approve]")) await clickAndWait(page, "button[value=approve]");
        await keepCookies();
      };

      await t.step("the button signs alice in; she is provisioned as alice with her e-mail", async () => {
        await signInWithSso();
        assertEquals(new URL(page.url()).href, `${srv.url}/`, await main());
        assert((await main()).includes("Signed in as alice."), await main());
        const user = await api.get("/api/v1/admin/users/alice", { token: admin });
        assertEquals([user.body.email, user.body.admin], [oidcUsers.alice.email, false]);
        const link = await api.get("/api/v2/admin/users/alice/identity", { token: admin });
        assert(String(link.body.identity.user_id).startsWith("u_"), link.text);
        // The sign-in is an audit event naming the method and its type, never a secret.
        const signIns: Record<string, unknown>[] = [];
        for await (const { line } of srv.server.data.log.read(1)) {
          for (const e of JSON.parse(line).Events) {
            if (e.Type === "RegistrySignIn" && e.Payload.AuthToken.username === "alice") {
              signIns.push(e.Payload.AuthToken);
            }
          }
        }
        assertEquals(signIns.length, 1);
        const { account_id: accountId, ...rest } = signIns[0]!;
        assert(String(accountId).startsWith("acctoidc_"), String(accountId));
        assertEquals(rest, {
          username: "alice",
          auth_method_id: oidc,
          auth_method_type: "oidc",
          user_id: link.body.identity.user_id,
          client_ip: "127.0.0.1",
        });
        // The auth token her login minted was deleted when the console collected it: none is hers.
        const tokens = await authAdmin.get("/v1/auth-tokens?scope_id=global");
        assertEquals(tokens.status, 200, JSON.stringify(tokens.body));
        const owners = (tokens.body.items as { user_id: string }[]).map((tk) => tk.user_id);
        assert(owners.length > 0 && !owners.includes(link.body.identity.user_id), JSON.stringify(owners));
      });

      await t.step("signing in again is the same registry user, nothing new", async () => {
        await clickAndWait(page, "header form[action='/ui/logout'] button");
        await signInWithSso();
        assert((await main()).includes("Signed in as alice."), await main());
        const users = await api.get("/api/v1/admin/users", { token: admin });
        assertEquals(users.body.users.map((u: { username: string }) => u.username).sort(), [
          "admin",
          "alice",
        ]);
      });

      await t.step("an oidc managed group bound as registry admin shows alice the admin pages", async () => {
        const adminPage = async () =>
          (await page.goto(`${srv.url}/ui/admin`, { waitUntil: "load" }))?.status();
        assertEquals(await adminPage(), 403);
        const group = await authAdmin.post("/v1/managed-groups", {
          auth_method_id: oidc,
          name: "sso-admins",
          attributes: { filter: '"/token/groups" contains "admins"' },
        });
        assertEquals(group.status, 200, JSON.stringify(group.body));
        const bound = await api.put("/api/v2/admin/group-bindings", { admin_groups: [group.body.id] }, {
          token: admin,
        });
        assertEquals([bound.status, bound.body], [200, { admin_groups: [group.body.id] }]);
        // Membership is decided at login: alice signs in again.
        await clickAndWait(page, "header form[action='/ui/logout'] button");
        await signInWithSso();
        const g = await authAdmin.get(`/v1/managed-groups/${group.body.id}`);
        assertEquals((g.body.member_ids ?? []).length, 1, JSON.stringify(g.body));
        assertEquals(await adminPage(), 200);
        assert((await main()).includes("Administration"), await main());
        assert((await main()).includes("Sign-in methods"), await main());
        // alice, an administrator through her group, is one who can sign in through the oidc method alone; then
        // emptying the admin groups would leave no administrator able to sign in: refused (422).
        const onlyOidc = await api.put("/api/v2/admin/sign-in-methods", { methods: [oidc] }, {
          token: admin,
        });
        assertEquals([onlyOidc.status, onlyOidc.body], [200, { methods: [oidc] }]);
        const emptied = await api.put("/api/v2/admin/group-bindings", { admin_groups: [] }, { token: admin });
        assertEquals([emptied.status, emptied.body], [422, {
          errors: [
            "These admin groups would leave no registry administrator able to sign in through the sign-in " +
            "methods; give another administrator a way to sign in first",
          ],
          success: false,
        }]);
        assertEquals((await api.get("/api/v2/admin/group-bindings", { token: admin })).body, {
          admin_groups: [group.body.id],
        });
        const restored = await api.put("/api/v2/admin/sign-in-methods", {
          methods: ["registry", primary, oidc],
        }, {
          token: admin,
        });
        assertEquals(restored.status, 200, restored.text);
        // During maintenance a group admin still signs in, as an administrator does.
        assertEquals(
          (await api.put("/api/v1/admin/maintenance", { enabled: true }, { token: admin })).status,
          200,
        );
        try {
          await clickAndWait(page, "header form[action='/ui/logout'] button");
          await signInWithSso();
          assertEquals(await adminPage(), 200);
        } finally {
          await api.put("/api/v1/admin/maintenance", { enabled: false }, { token: admin });
        }
        // The stored user is not made an admin: the group grants it, request by request.
        const stored = await api.get("/api/v1/admin/users/alice", { token: admin });
        assertEquals(stored.body.admin, false);
        // Deleting the group removes its binding, and with it alice's admin pages.
        assertEquals((await authAdmin.delete(`/v1/managed-groups/${group.body.id}`)).status, 200);
        for (let i = 0; i < 50; i++) {
          const left = await api.get("/api/v2/admin/group-bindings", { token: admin });
          if (left.body.admin_groups.length === 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        assertEquals((await api.get("/api/v2/admin/group-bindings", { token: admin })).body, {
          admin_groups: [],
        });
        assertEquals(await adminPage(), 403);
      });

      await t.step("an attacker's attempt completed by alice's browser signs nobody in", async () => {
        // The attacker starts a sign-in and sends alice the provider's URL (state and all) it was given.
        const attacker = new WebClient(srv.url);
        const started = await attacker.get(`/ui/login/oidc/${oidc}`);
        assertEquals(started.status, 303);
        const authUrl = started.headers.get("location")!;
        assertEquals(new URL(authUrl).origin, new URL(op.issuer).origin);
        assert(attacker.cookies.has("wharf_oidc"));
        // alice, signed in at the provider, opens it: the provider sends her browser through wharf's callback.
        await page.goto(authUrl, { waitUntil: "load" });
        if (await page.$("button[value=approve]")) await clickAndWait(page, "button[value=approve]");
        assertEquals(new URL(page.url()).pathname, "/ui/login/oidc/complete");
        // The attacker's browser collects its attempt: it must not become alice's session.
        const done = await attacker.get("/ui/login/oidc/complete");
        assertEquals(done.status, 401, done.text);
        assert(done.text.includes("Unable to sign in with Corp SSO."), done.text);
        assert(!attacker.cookies.has("wharf_session"));
      });

      await t.step(
        "an attempt started through the auth-method API never becomes a console session",
        async () => {
          // The attacker starts the method's own login (the CLI's flow) and sends alice its provider URL.
          const start = await new Client(srv.url).post(`/v1/auth-methods/${oidc}:authenticate`, {
            command: "start",
          });
          assertEquals(start.status, 200, JSON.stringify(start.body));
          const { auth_url: authUrl, token_id: tokenId } = start.body.attributes;
          await page.goto(authUrl, { waitUntil: "load" });
          if (await page.$("button[value=approve]")) await clickAndWait(page, "button[value=approve]");
          assertEquals(new URL(page.url()).pathname, "/authentication-complete");
          // The attacker hands the completion page that attempt's token id as if its browser had started it.
          const attacker = new WebClient(srv.url);
          attacker.cookies.set("wharf_oidc", `${oidc}.${tokenId}`);
          const done = await attacker.get("/ui/login/oidc/complete");
          assertEquals(done.status, 401, done.text);
          assert(!attacker.cookies.has("wharf_session"));
        },
      );

      await t.step("a sign-in completed after its method was made inactive signs nobody in", async () => {
        const starter = new WebClient(srv.url);
        const started = await starter.get(`/ui/login/oidc/${oidc}`);
        assertEquals(started.status, 303);
        const changeState = async (state: string) => {
          const { version } = (await authAdmin.get(`/v1/auth-methods/${oidc}`)).body;
          const r = await authAdmin.post(`/v1/auth-methods/${oidc}:change-state`, {
            version,
            attributes: { state },
          });
          assertEquals(r.status, 200, JSON.stringify(r.body));
        };
        assert((await starter.get("/ui/login")).text.includes("Sign in with Corp SSO"));
        // The administrator turns the method off while alice is at the provider.
        await changeState("inactive");
        try {
          // The login page no longer offers it (its start would be refused).
          const login = await starter.get("/ui/login");
          assertEquals(login.status, 200);
          assert(
            !login.text.includes("Sign in with") && !login.text.includes(`/ui/login/oidc/${oidc}`),
            login.text,
          );
          // alice's browser (the one that started the attempt) goes through the provider and back.
          await page.setCookie({
            name: "wharf_oidc",
            value: starter.cookies.get("wharf_oidc")!,
            url: srv.url,
          });
          await page.goto(started.headers.get("location")!, { waitUntil: "load" });
          if (await page.$("button[value=approve]")) await clickAndWait(page, "button[value=approve]");
          assertEquals(new URL(page.url()).pathname, "/ui/login/oidc/complete", await main());
          assert((await main()).includes("Corp SSO is not offered for sign-in now."), await main());
        } finally {
          await changeState("active-public");
        }
      });

      await t.step(
        "alice with two-factor on: after the provider, the code step; a wrong code is refused, the right signs in",
        async () => {
          const enrol = await api.post("/api/v1/admin/users/alice/totp", undefined, { token: admin });
          assertEquals(enrol.status, 200, enrol.text);
          const app = new OTPAuth.TOTP({
            secret: OTPAuth.Secret.fromBase32(enrol.body.secret),
            digits: 6,
            period: 30,
          });
          const step = () => Math.floor(Date.now() / 30_000);
          const codeAt = (at: number) => app.generate({ timestamp: at * 30_000 });
          const confirm = await api.post("/api/v1/admin/users/alice/totp/confirm", {
            code: codeAt(step() - 1),
          }, {
            token: admin,
          });
          assertEquals(confirm.status, 200, confirm.text);
          const on = await api.put("/api/v1/admin/users/alice", { user: { two_factor_enabled: true } }, {
            token: admin,
          });
          assertEquals(on.status, 200, on.text);
          const signInsOfAlice = async () => {
            let n = 0;
            for await (const { line } of srv.server.data.log.read(1)) {
              for (const e of JSON.parse(line).Events) {
                if (e.Type === "RegistrySignIn" && e.Payload.AuthToken.username === "alice") n++;
              }
            }
            return n;
          };
          const before = await signInsOfAlice();
          if (await page.$("header form[action='/ui/logout'] button")) {
            await clickAndWait(page, "header form[action='/ui/logout'] button");
          }
          await signInWithSso();
          assertEquals(new URL(page.url()).pathname, "/ui/login/code", await main());
          assert((await main()).includes("Two-factor code"), await main());
          // Not signed in yet: the console's pages still ask for a sign-in.
          const cookies = (await page.cookies(srv.url)).map((c) => c.name);
          assert(!cookies.includes("wharf_session"), cookies.join());
          const valid = new Set([-1, 0, 1].map((d) => codeAt(step() + d)));
          let wrong = "000000";
          for (let n = 1; valid.has(wrong); n++) wrong = String(n).padStart(6, "0");
          await fill(page, "input[name=code]", wrong);
          await clickAndWait(page, `form[action='/ui/login/code'] button[type=submit]`);
          assertEquals(new URL(page.url()).pathname, "/ui/login/code");
          assert((await main()).includes("Invalid or expired two-factor code!"), await main());
          assertEquals(await signInsOfAlice(), before);
          await fill(page, "input[name=code]", codeAt(step()));
          await clickAndWait(page, `form[action='/ui/login/code'] button[type=submit]`);
          assertEquals(new URL(page.url()).href, `${srv.url}/`, await main());
          assert((await main()).includes("Signed in as alice."), await main());
          assertEquals(await signInsOfAlice(), before + 1);
          await keepCookies();
          // The step is used up: the code page asks for a new sign-in.
          const again = await page.goto(`${srv.url}/ui/login/code`, { waitUntil: "load" });
          assertEquals(again?.status(), 401);
          // Wrong codes count against the password form's per-user throttle (10 in 15 minutes, the one wrong
          // code above included): nine more, and the right code is refused too.
          await clickAndWait(page, "header form[action='/ui/logout'] button");
          await signInWithSso();
          assertEquals(new URL(page.url()).pathname, "/ui/login/code", await main());
          for (let i = 0; i < 9; i++) {
            await fill(page, "input[name=code]", wrong);
            await clickAndWait(page, `form[action='/ui/login/code'] button[type=submit]`);
            assert((await main()).includes("Invalid or expired two-factor code!"), `${i}: ${await main()}`);
          }
          await fill(page, "input[name=code]", codeAt(step() + 1));
          const [limited] = await Promise.all([
            page.waitForNavigation(),
            page.click(`form[action='/ui/login/code'] button[type=submit]`),
          ]);
          assertEquals(limited?.status(), 429);
          assert((await main()).includes("Rate limit exceeded"), await main());
          assertEquals(await signInsOfAlice(), before + 1);
        },
      );

      await t.step("the completion page signs in only the browser that started the attempt", async () => {
        const stranger = new WebClient(srv.url);
        const answer = await stranger.get("/ui/login/oidc/complete");
        assertEquals(answer.status, 401);
        assert(answer.text.includes("No sign-in with an identity provider was started in this browser."));
        assert(!stranger.cookies.has("wharf_session"));
      });

      await t.step(
        "a start another site made the browser send is refused before it counts or stores",
        async () => {
          // Another site's <img src=…/ui/login/oidc/ID>, 30 times (the address's start budget a minute): 403 each,
          // no attempt bound to the browser.
          const victim = new WebClient(srv.url);
          const start = (site: string) => victim.get(`/ui/login/oidc/${oidc}`, { "Sec-Fetch-Site": site });
          const crossSite: number[] = [];
          for (let i = 0; i < 30; i++) crossSite.push((await start("cross-site")).status);
          assertEquals(crossSite, new Array(30).fill(403));
          const sameSite = await start("same-site");
          assertEquals(sameSite.status, 403);
          assert(sameSite.headers.get("content-type")?.startsWith("text/html"));
          assert(sameSite.text.includes("<h1>Not allowed</h1>"), sameSite.text);
          assert(sameSite.text.includes("cross-site request refused"), sameSite.text);
          assert(!victim.cookies.has("wharf_oidc"));
          // The budget is untouched: the login page's link (same-origin) and a typed address (none) still start.
          for (const site of ["same-origin", "none"]) {
            const started = await start(site);
            assertEquals(started.status, 303, `${site}: ${started.text}`);
            assertEquals(new URL(started.headers.get("location")!).origin, new URL(op.issuer).origin);
          }
          assert(victim.cookies.has("wharf_oidc"));
        },
      );

      await t.step("no OIDC code, state, nonce, PKCE challenge, cookie or token in any log line", () => {
        const secrets = new Set<string>([op.clientSecret, ADMIN_PASSWORD, admin, authAdmin.token!]);
        for (const c of cookiesSeen) if (c.length >= 16) secrets.add(c);
        let callbacks = 0;
        for (const href of requested) {
          const url = new URL(href);
          if (url.pathname === callbackPath) callbacks++;
          for (const name of ["code", "state", "nonce", "code_challenge"]) {
            const value = url.searchParams.get(name);
            if (value) secrets.add(value);
          }
        }
        assert(callbacks >= 4, `callbacks seen: ${callbacks}`);
        assert(secrets.size >= 4 * 3, `secrets: ${secrets.size}`);
        assert(logLines.some((l) => l.includes(callbackPath)), logLines.slice(-5).join("\n"));
        for (const secret of secrets) {
          const leaked = logLines.find((l) => l.includes(secret));
          assert(leaked === undefined, `a log line holds a secret: ${leaked}`);
        }
      });
    } finally {
      await close();
      await op.stop();
      await srv.stop();
    }
  },
);
