// The console's OIDC sign-in driven over HTTP against a real OpenID provider (oidc-provider), one server for the
// file: the attempt's login mints no auth token (Boundary's own flow still does), the registry user found through
// the index of links after link, unlink, delete and provisioning, an SMS-only user finishing the code step, and
// an account deleted before the console collects its sign-in (docs/identity.md#oidc-sign-in).

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { startConsoleOidc } from "./oidc_http_sign_in.ts";

Deno.test("console OIDC sign-in: no auth token, the linked user by index, an SMS code step", async (t) => {
  const { srv, api, admin, authAdmin, oidc, signIn, signedInAs, stop } = await startConsoleOidc();
  try {
    /** The stored events of `types` (in commit order) whose payload names `methodId`. */
    const eventsOf = async (types: string[], methodId: string) => {
      const seen: { type: string; payload: Record<string, unknown> }[] = [];
      for await (const { line } of srv.server.data.log.read(1)) {
        for (const e of JSON.parse(line).Events ?? []) {
          const payload = e.Payload?.AuthToken;
          if (types.includes(e.Type) && payload?.auth_method_id === methodId) {
            seen.push({ type: e.Type, payload });
          }
        }
      }
      return seen;
    };
    const tokenTypes = ["AuthTokenIssued", "AuthTokenDeleted"];
    const authTokenIds = async () => {
      const list = await authAdmin.get("/v1/auth-tokens?scope_id=global");
      assertEquals(list.status, 200, JSON.stringify(list.body));
      return (list.body.items as { id: string }[]).map((tk) => tk.id).sort();
    };

    await t.step(
      "a console sign-in mints no auth token: no token events, the token list unchanged",
      async () => {
        const tokensBefore = await authTokenIds();
        const { web, answer } = await signIn(oidcUsers.alice);
        assertEquals([answer.status, answer.headers.get("location")], [303, "/"], answer.text);
        assertEquals(await signedInAs(web), "alice");
        // The login itself completed: the account with its mapped e-mail, the sign-in event.
        const link = await api.get("/api/v2/admin/users/alice/identity", { token: admin });
        const person = link.body.identity.user_id;
        assert(String(person).startsWith("u_"), link.text);
        const accounts = await authAdmin.get(`/v1/accounts?auth_method_id=${oidc}`);
        assertEquals(
          (accounts.body.items as { attributes: { email?: string } }[]).map((a) => a.attributes.email),
          [oidcUsers.alice.email],
        );
        assertEquals((await eventsOf(["RegistrySignIn"], oidc)).length, 1);
        assertEquals(await eventsOf(tokenTypes, oidc), []);
        assertEquals(await authTokenIds(), tokensBefore);
      },
    );

    await t.step(
      "Boundary's own OIDC flow (:authenticate start, callback, token) still mints a token",
      async () => {
        const before = (await eventsOf(tokenTypes, oidc)).length;
        const start = await authAdmin.post(`/v1/auth-methods/${oidc}:authenticate`, { command: "start" });
        assertEquals(start.status, 200, JSON.stringify(start.body));
        const { auth_url: authUrl, token_id: tokenId } = start.body.attributes;
        const { callbackUrl } = await completeProviderLogin(authUrl, oidcUsers.alice);
        const callback = await fetch(callbackUrl, { redirect: "manual" });
        await callback.body?.cancel();
        assertEquals(new URL(callback.headers.get("location")!).pathname, "/authentication-complete");
        const token = await authAdmin.post(`/v1/auth-methods/${oidc}:authenticate`, {
          command: "token",
          attributes: { token_id: tokenId },
        });
        assertEquals(token.status, 200, JSON.stringify(token.body));
        assert(String(token.body.attributes.token).startsWith("at_"), JSON.stringify(token.body));
        const issued = (await eventsOf(tokenTypes, oidc)).slice(before);
        assertEquals(issued.map((e) => [e.type, e.payload.id]), [[
          "AuthTokenIssued",
          token.body.attributes.id,
        ]]);
        assert((await authTokenIds()).includes(token.body.attributes.id));
      },
    );

    await t.step(
      "sign-in finds the linked user after unlink, link, delete and a new provisioning",
      async () => {
        const first = await signIn(oidcUsers.bob);
        assertEquals(await signedInAs(first.web), "bob");
        const person =
          (await api.get("/api/v2/admin/users/bob/identity", { token: admin })).body.identity.user_id;
        // Unlinked: the person has no registry user, and provisioning bob again collides with the one left.
        assertEquals((await api.delete("/api/v2/admin/users/bob/identity", { token: admin })).status, 200);
        const collided = await signIn(oidcUsers.bob);
        assertEquals(collided.answer.status, 409, collided.answer.text);
        assert(collided.answer.text.includes("the username &#39;bob&#39; is taken"), collided.answer.text);
        // Linked to another registry user: the sign-in is that user.
        const created = await api.post("/api/v1/admin/users", {
          username: "builder",
          email: "builder@example.org",
          password: "builder-password-1",
        }, { token: admin });
        assert(created.status < 300, created.text);
        const linked = await api.put("/api/v2/admin/users/builder/identity", { user_id: person }, {
          token: admin,
        });
        assertEquals(linked.status, 200, linked.text);
        assertEquals(await signedInAs((await signIn(oidcUsers.bob)).web), "builder");
        // That user deleted, and the old bob too: the next sign-in provisions bob again, linked to the person.
        for (const name of ["builder", "bob"]) {
          assertEquals((await api.delete(`/api/v1/admin/users/${name}`, { token: admin })).status, 200);
        }
        assertEquals(await signedInAs((await signIn(oidcUsers.bob)).web), "bob");
        const relinked = await api.get("/api/v2/admin/users/bob/identity", { token: admin });
        assertEquals(relinked.body.identity, { user_id: person });
        assertEquals(await signedInAs((await signIn(oidcUsers.bob)).web), "bob");
      },
    );

    await t.step("an SMS-only user finishes the code step with a code texted from it", async () => {
      const sms = await api.put("/api/v1/admin/users/alice", {
        user: { mobile: "+15550001234", two_factor_enabled: true },
      }, { token: admin });
      assertEquals(sms.status, 200, sms.text);
      const { web, answer } = await signIn(oidcUsers.alice);
      assertEquals([answer.status, answer.headers.get("location")], [303, "/ui/login/code"], answer.text);
      // The code form offers "Text me a code": the user has a mobile number.
      const form = await web.get("/ui/login/code");
      assertEquals(form.status, 200);
      assert(form.text.includes('name="send_sms"'), form.text);
      // "Text me a code" on the code step: no password asked, the first factor passed at the provider.
      const sent = await web.postForm("/ui/login/code", { send_sms: "1" });
      assertEquals(sent.status, 200, sent.text);
      assert(sent.text.includes("A code was sent to the SMS number ending in 1234."), sent.text);
      const outbox = (await Deno.readTextFile(`${srv.dataDir}/outbox/sms.ndjson`)).trim().split("\n");
      const { to, code } = JSON.parse(outbox.at(-1)!);
      assertEquals(to, "+15550001234");
      assert(sent.text.includes('name="send_sms"'), sent.text);
      // Requests are bounded as after the password form: one per 30 seconds per user.
      const again = await web.postForm("/ui/login/code", { send_sms: "1" });
      assertEquals(again.status, 429, again.text);
      assert(again.headers.get("retry-after"), "Retry-After");
      const before = (await eventsOf(["RegistrySignIn"], oidc)).length;
      const done = await web.postForm("/ui/login/code", { code });
      assertEquals([done.status, done.headers.get("location")], [303, "/"], done.text);
      assertEquals(await signedInAs(web), "alice");
      assertEquals((await eventsOf(["RegistrySignIn"], oidc)).length, before + 1);
      assertEquals(await eventsOf(tokenTypes, oidc).then((e) => e.length), 1);
    });

    await t.step(
      "the person's account deleted before the console collects the sign-in: nobody signed in",
      async () => {
        const { web, answer } = await signIn(oidcUsers.carol, async () => {
          const accounts = await authAdmin.get(`/v1/accounts?auth_method_id=${oidc}`);
          const account = (accounts.body.items as { id: string; attributes: { email?: string } }[])
            .find((a) => a.attributes.email === oidcUsers.carol.email)!;
          assertEquals((await authAdmin.delete(`/v1/accounts/${account.id}`)).status, 200);
        });
        assertEquals(answer.status, 401, answer.text);
        assert(
          answer.text.includes("This sign-in with Corp SSO expired or was used already; start again."),
          answer.text,
        );
        assertEquals(await signedInAs(web), undefined);
        assertEquals((await api.get("/api/v1/user/carol", { token: admin })).status, 404);
      },
    );
  } finally {
    await stop();
  }
});
