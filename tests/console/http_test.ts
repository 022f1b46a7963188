// The web console over HTTP: content negotiation on /:user/:box (Vagrant still gets JSON), 404 pages for
// invisible boxes and versions, CSRF and cross-site refusals, cookie attributes and rotation, the API's login
// throttle, session idle and absolute expiry, security headers, hashed assets, and a 100-version box page's time.

import * as OTPAuth from "otpauth";
import { assert, assertEquals } from "../helpers/assert.ts";
import { createOrg, createUser, type Fixture, publishExternal, startRegistry } from "../registry/helpers.ts";
import { WebClient } from "./helpers.ts";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";

async function setup(f: Fixture) {
  const alice = await createUser(f, "alice");
  await createUser(f, "bob");
  await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
  await publishExternal(f, alice, "alice/public-box", "1.0.0", { isPrivate: false });
  await publishExternal(f, alice, "alice/secret-box", "1.0.0", { isPrivate: true });
  const body = { box: { short_description: "top secret words", description: "classified" } };
  assertEquals((await f.api.put("/api/v1/box/alice/secret-box", body, { token: alice })).status, 200);
  const v = await f.api.post("/api/v1/box/alice/public-box/versions", { version: { version: "2.0.0" } }, {
    token: alice,
  });
  assertEquals(v.status, 200, v.text);
  return { alice };
}

Deno.test("web console over HTTP", async (t) => {
  // No request rate limit: the 100-version step makes ~300 API calls, faster than 100/s on an idle machine.
  const f = await startRegistry({ WHARF_RATE_LIMIT_RPS: "0" });
  try {
    const { alice } = await setup(f);

    await t.step(
      "/:user/:box answers Vagrant's metadata JSON, and redirects a browser to the box page",
      async () => {
        for (const accept of ["application/json", "application/json, text/html", "*/*", ""]) {
          const headers: Record<string, string> = accept ? { Accept: accept } : {};
          const r = await fetch(`${f.srv.url}/alice/public-box`, { headers, redirect: "manual" });
          assertEquals(r.status, 200, accept);
          assert(r.headers.get("content-type")!.startsWith("application/json"));
          assertEquals((await r.json()).name, "alice/public-box");
          assert(r.headers.get("vary")?.includes("Accept"), "caches keep the JSON and the redirect apart");
          const head = await fetch(`${f.srv.url}/alice/public-box`, {
            method: "HEAD",
            headers,
            redirect: "manual",
          });
          assertEquals(head.status, 200);
          await head.body?.cancel();
        }
        const r = await fetch(`${f.srv.url}/alice/public-box`, {
          headers: { Accept: BROWSER_ACCEPT },
          redirect: "manual",
        });
        await r.body?.cancel();
        assertEquals(r.status, 302);
        assertEquals(r.headers.get("location"), "/alice/boxes/public-box");
        const page = await new WebClient(f.srv.url).get("/alice/boxes/public-box");
        assertEquals(page.status, 200);
        assert(page.text.includes('config.vm.box = "alice/public-box"'));
        assert(page.text.includes(`export VAGRANT_SERVER_URL=${f.srv.url}`));
      },
    );

    await t.step("an invisible box, version or user is a 404 page that reveals nothing", async () => {
      const anon = new WebClient(f.srv.url);
      for (
        const path of [
          "/alice/boxes/secret-box",
          "/alice/boxes/secret-box/versions/1.0.0",
          "/alice/boxes/nope",
          "/alice/boxes/public-box/versions/2.0.0",
          "/nobody",
          "/ui/nothing-here",
        ]
      ) {
        const page = await anon.get(path);
        assertEquals(page.status, 404, path);
        assert(page.headers.get("content-type")!.startsWith("text/html"), path);
        assert(!page.text.includes("top secret") && !page.text.includes("classified"), path);
      }
      // API clients keep the registry's JSON 404 on the shared paths.
      const json = await fetch(`${f.srv.url}/alice/boxes/secret-box`, {
        headers: { Accept: "application/json" },
      });
      assertEquals(json.status, 404);
      assertEquals((await json.json()).errors, ["Resource not found!"]);
      // The search page does not list it either; its owner sees both.
      const results = await anon.get("/boxes/search?q=box");
      assert(results.text.includes("alice/public-box") && !results.text.includes("secret-box"));
      const owner = new WebClient(f.srv.url);
      assertEquals((await owner.signIn("alice", "alice-password")).status, 303);
      assertEquals((await owner.get("/alice/boxes/secret-box")).status, 200);
      const unreleased = await owner.get("/alice/boxes/public-box/versions/2.0.0");
      assertEquals(unreleased.status, 200);
      assert((await owner.get("/boxes/search?q=box")).text.includes("alice/secret-box"));
      // A version page offers its management to the box's insiders only.
      assert(unreleased.text.includes('<h2 id="manage">Manage this version</h2>'), unreleased.text);
      const outsider = new WebClient(f.srv.url);
      assertEquals((await outsider.signIn("bob", "bob-password")).status, 303);
      const released = await outsider.get("/alice/boxes/public-box/versions/1.0.0");
      assertEquals(released.status, 200);
      assert(!released.text.includes("Manage this version"), released.text);
    });

    await t.step(
      "pages carry the CSP, no framing, nosniff; assets have hashed names and year-long caching",
      async () => {
        const page = await new WebClient(f.srv.url).get("/");
        const csp = page.headers.get("content-security-policy")!;
        assert(csp.includes("script-src 'self'") && csp.includes("frame-ancestors 'none'"), csp);
        assert(!csp.includes("unsafe-inline"));
        assertEquals(page.headers.get("x-content-type-options"), "nosniff");
        assert(!/<script>/.test(page.text) && !/ on[a-z]+="/.test(page.text), "no inline script or handler");
        const css = /href="(\/ui\/assets\/console\.[0-9a-f]{16}\.css)"/.exec(page.text)![1]!;
        const js = /src="(\/ui\/assets\/console\.[0-9a-f]{16}\.js)"/.exec(page.text)![1]!;
        for (const path of [css, js]) {
          const r = await fetch(f.srv.url + path);
          await r.body?.cancel();
          assertEquals(r.status, 200);
          assertEquals(r.headers.get("cache-control"), "public, max-age=31536000, immutable");
        }
        const stale = await fetch(`${f.srv.url}/ui/assets/console.0000000000000000.css`);
        await stale.body?.cancel();
        assertEquals(stale.status, 404);
      },
    );

    await t.step(
      "the session cookie is HttpOnly, SameSite=Lax, not Secure over http, and rotated at sign-in",
      async () => {
        const web = new WebClient(f.srv.url);
        assertEquals((await web.signIn("alice", "alice-password")).status, 303);
        const first = web.cookies.get("wharf_session")!;
        const line = web.setCookies.find((l) => l.startsWith("wharf_session="))!;
        assert(/HttpOnly/.test(line) && /SameSite=Lax/.test(line) && !/Secure/.test(line), line);
        assertEquals((await web.signIn("alice", "alice-password")).status, 303);
        const second = web.cookies.get("wharf_session")!;
        assert(first !== second);
        const old = new WebClient(f.srv.url);
        old.cookies.set("wharf_session", first);
        assertEquals(
          (await old.get("/ui/settings/tokens")).status,
          303,
          "the old session ended at the new sign-in",
        );
        assertEquals((await web.get("/ui/settings/tokens")).status, 200);
      },
    );

    await t.step(
      "a form post without the CSRF token, with a wrong one, or from another site is refused",
      async () => {
        const web = new WebClient(f.srv.url);
        await web.signIn("alice", "alice-password");
        await web.get("/ui/boxes/new");
        const box = (name: string) => ({ owner: "alice", name, short_description: "x", description: "" });
        assertEquals((await web.postForm("/ui/boxes/new", { ...box("csrf1"), _csrf: null })).status, 403);
        assertEquals((await web.postForm("/ui/boxes/new", { ...box("csrf2"), _csrf: "forged" })).status, 403);
        const evil = await web.postForm("/ui/boxes/new", box("csrf3"), { Origin: "http://evil.example" });
        assertEquals(evil.status, 403);
        const crossSite = await web.postForm("/ui/boxes/new", box("csrf4"), {
          "Sec-Fetch-Site": "cross-site",
        });
        assertEquals(crossSite.status, 403);
        for (const n of ["csrf1", "csrf2", "csrf3", "csrf4"]) {
          assertEquals((await f.api.get(`/api/v1/box/alice/${n}`, { token: alice })).status, 404, n);
        }
        const ok = await web.postForm("/ui/boxes/new", box("csrf5"), { Origin: f.srv.url });
        assertEquals(ok.status, 303, ok.text);
        assertEquals((await f.api.get("/api/v1/box/alice/csrf5", { token: alice })).status, 200);
        // The login form has its own token, bound to a cookie.
        const stranger = new WebClient(f.srv.url);
        const login = await stranger.postForm("/ui/login", { login: "alice", password: "alice-password" });
        assertEquals(login.status, 403);
      },
    );

    await t.step(
      "the console applies the API's permission rules: bob cannot change alice's boxes",
      async () => {
        const bob = new WebClient(f.srv.url);
        assertEquals((await bob.signIn("bob", "bob-password")).status, 303);
        assertEquals((await bob.get("/ui/boxes/alice/public-box/edit")).status, 403);
        assertEquals((await bob.get("/ui/boxes/alice/secret-box/edit")).status, 404);
        const post = await bob.postForm("/ui/boxes/alice/public-box/edit", {
          name: "stolen",
          short_description: "pwned",
        });
        assertEquals(post.status, 303);
        assertEquals((await bob.get(post.headers.get("location")!)).text.includes("not allowed"), true);
        const box = await f.api.get("/api/v1/box/alice/public-box", { token: alice });
        assertEquals(box.body.short_description, null);
        const created = await bob.postForm("/ui/boxes/new", { owner: "acme", name: "intruder" });
        assertEquals(created.status, 303);
        assertEquals((await f.api.get("/api/v1/box/acme/intruder", { token: alice })).status, 404);
        assertEquals((await bob.get("/ui/orgs/acme")).status, 404);
        assertEquals((await bob.get("/ui/admin")).status, 403);
      },
    );

    await t.step(
      "an upload prepared from the page goes to the API's upload URL (with and without JavaScript)",
      async () => {
        const web = new WebClient(f.srv.url);
        await web.signIn("alice", "alice-password");
        const v = "/ui/boxes/alice/public-box/versions/2.0.0";
        await web.get("/alice/boxes/public-box/versions/2.0.0");
        for (const arch of ["amd64", "arm64"]) {
          const added = await web.postForm(`${v}/providers`, { name: "libvirt", architecture: arch });
          assertEquals(added.status, 303, added.text);
        }
        // Without JavaScript: a page with the URL and a curl command.
        const page = await web.postForm(`${v}/providers/libvirt/amd64/upload`, {});
        assertEquals(page.status, 200);
        const url = /curl --fail --upload-file \.\/package\.box '([^']+)'/.exec(page.text)?.[1];
        assert(url, page.text);
        assert(url.startsWith(`${f.srv.url}/api/v`), url);
        const put = await fetch(url, { method: "PUT", body: "amd64 bytes" });
        assertEquals(put.status, 200);
        await put.body?.cancel();
        // With JavaScript: JSON, then the script PUTs the file.
        const prepared = await web.postForm(`${v}/providers/libvirt/arm64/upload`, {}, {
          Accept: "application/json",
        });
        assertEquals(prepared.status, 200);
        const upload = await fetch(JSON.parse(prepared.text).upload_path, {
          method: "PUT",
          body: "arm64 bytes",
        });
        assertEquals(upload.status, 200);
        await upload.body?.cancel();
        const box = await f.api.get("/api/v2/box/alice/public-box/version/2.0.0", { token: alice });
        const hosted = box.body.providers.filter((p: { hosted: boolean }) => p.hosted).map((
          p: { architecture: string },
        ) => p.architecture).sort();
        assertEquals(hosted, ["amd64", "arm64"]);
        // A provider of a box the user may not write gets the API's refusal as JSON for the script.
        const bob = new WebClient(f.srv.url);
        await bob.signIn("bob", "bob-password");
        const refused = await bob.postForm(`${v}/providers/libvirt/arm64/upload`, {}, {
          Accept: "application/json",
        });
        assertEquals(refused.status, 403);
        assertEquals(JSON.parse(refused.text).success, false);
      },
    );

    await t.step("an organization's owner manages members and service principals from its page", async () => {
      const web = new WebClient(f.srv.url);
      await web.signIn("alice", "alice-password");
      assertEquals((await web.get("/ui/orgs/acme")).status, 200);
      const added = await web.postForm("/ui/orgs/acme/members", { username: "bob", role: "member" });
      assertEquals(added.status, 303);
      assert((await web.get("/ui/orgs/acme")).text.includes('href="/bob"'));
      const created = await web.postForm("/ui/orgs/acme/service-principals", { name: "ci" });
      assertEquals(created.status, 303);
      const shown = await web.get("/ui/orgs/acme");
      const secret = /id="sp-secret">([^<]+)</.exec(shown.text)?.[1];
      const clientId = /Client id: <code>([^<]+)</.exec(shown.text)?.[1];
      assert(secret && clientId, shown.text);
      assert(!(await web.get("/ui/orgs/acme")).text.includes(secret), "the secret is shown once");
      const token = await fetch(`${f.srv.url}/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: secret,
        }),
      });
      assertEquals(token.status, 200);
      await token.body?.cancel();
      // A plain member sees the members, not the management forms or principals.
      const bob = new WebClient(f.srv.url);
      await bob.signIn("bob", "bob-password");
      const memberView = await bob.get("/ui/orgs/acme");
      assertEquals(memberView.status, 200);
      assert(!memberView.text.includes("Service principals") && !memberView.text.includes(clientId));
      const refused = await bob.postForm(`/ui/orgs/acme/service-principals/${clientId}/delete`, {});
      assertEquals(refused.status, 303);
      assert((await bob.get("/ui/orgs/acme")).text.includes("not allowed"));
      const deleted = await web.postForm(`/ui/orgs/acme/service-principals/${clientId}/delete`, {});
      assertEquals(deleted.status, 303);
      assert(!(await web.get("/ui/orgs/acme")).text.includes(clientId));
      assertEquals((await web.postForm("/ui/orgs/acme/members/bob/delete", {})).status, 303);
      assertEquals((await bob.get("/ui/orgs/acme")).status, 404);
    });

    await t.step(
      "an authenticator app is enrolled with a code and removed only with a current code",
      async () => {
        const web = new WebClient(f.srv.url);
        await web.signIn("alice", "alice-password");
        await web.get("/ui/settings/security");
        assertEquals((await web.postForm("/ui/settings/security/totp", {})).status, 303);
        const shown = await web.get("/ui/settings/security");
        assert(shown.text.includes("<svg"), "QR code");
        const secret = /Key: <span class="secret">([A-Z2-7]+)</.exec(shown.text)?.[1];
        assert(secret, shown.text);
        const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
        assertEquals(
          (await web.postForm("/ui/settings/security/totp/confirm", { code: "000000" })).status,
          303,
        );
        assert((await web.get("/ui/settings/security")).text.includes("Invalid two-factor code"));
        assertEquals(
          (await web.postForm("/ui/settings/security/totp/confirm", { code: totp.generate() })).status,
          303,
        );
        const on = await f.api.get("/api/v1/admin/users/alice", { token: f.admin });
        assertEquals(on.body.two_factor, { enabled: true, delivery_methods: ["app"] });
        assertEquals((await web.postForm("/ui/settings/security/totp/remove", { code: "" })).status, 303);
        assert(
          (await web.get("/ui/settings/security")).text.includes(
            "A current code from your authenticator app is required",
          ),
        );
        assertEquals(
          (await f.api.get("/api/v1/admin/users/alice", { token: f.admin })).body.two_factor_enabled,
          true,
        );
        assertEquals(
          (await web.postForm("/ui/settings/security/totp/remove", { code: totp.generate() })).status,
          303,
        );
        const off = await f.api.get("/api/v1/admin/users/alice", { token: f.admin });
        assertEquals(off.body.two_factor, { enabled: false, delivery_methods: [] });
      },
    );

    await t.step("two-factor by SMS: the login page sends a code and signs in with it", async () => {
      const mobile = await f.api.put("/api/v1/admin/users/bob", {
        user: { mobile: "+15551231234", two_factor_enabled: true },
      }, {
        token: f.admin,
      });
      assertEquals(mobile.status, 200, mobile.text);
      const web = new WebClient(f.srv.url);
      assertEquals((await web.signIn("bob", "bob-password")).status, 401);
      await web.get("/ui/login");
      const sent = await web.postForm("/ui/login", { login: "bob", password: "bob-password", send_sms: "1" });
      assertEquals(sent.status, 200);
      assert(sent.text.includes("SMS number ending in 1234"), sent.text);
      const outbox = await Deno.readTextFile(`${f.srv.dataDir}/outbox/sms.ndjson`);
      const code = JSON.parse(outbox.trim().split("\n").at(-1)!).code as string;
      assertEquals((await web.signIn("bob", "bob-password", code)).status, 303);
      assertEquals((await web.get("/ui/settings/security")).status, 200);
    });

    await t.step("maintenance mode: only admins use the console", async () => {
      assertEquals(
        (await f.api.put("/api/v1/admin/maintenance", { enabled: true }, { token: f.admin })).status,
        200,
      );
      try {
        const anon = new WebClient(f.srv.url);
        assertEquals((await anon.get("/")).status, 503);
        assertEquals((await anon.signIn("alice", "alice-password")).status, 503);
        const admin = new WebClient(f.srv.url);
        assertEquals((await admin.signIn("admin", "admin-password-1")).status, 303);
        const home = await admin.get("/");
        assertEquals(home.status, 200);
        assert(home.text.includes("maintenance mode"));
      } finally {
        assertEquals(
          (await f.api.put("/api/v1/admin/maintenance", { enabled: false }, { token: f.admin })).status,
          200,
        );
      }
    });

    await t.step("admin pages: users, organizations, maintenance", async () => {
      const admin = new WebClient(f.srv.url);
      await admin.signIn("admin", "admin-password-1");
      assertEquals((await admin.get("/ui/admin")).status, 200);
      const made = await admin.postForm("/ui/admin/users", {
        username: "dave",
        email: "dave@example.com",
        password: "dave-password",
      });
      assertEquals(made.status, 303);
      assert((await admin.get("/ui/admin")).text.includes("User dave created."));
      assertEquals((await admin.postForm("/ui/admin/users/dave/delinquent", { value: "true" })).status, 303);
      const dave = await f.api.get("/api/v1/admin/users/dave", { token: f.admin });
      assertEquals(dave.body.delinquent, true);
      assertEquals((await admin.postForm("/ui/admin/orgs", { name: "initech", owner: "dave" })).status, 303);
      const org = await f.api.get("/api/v1/admin/organizations/initech", { token: f.admin });
      assertEquals(org.body.members, [{ username: "dave", role: "owner" }]);
      assertEquals((await admin.postForm("/ui/admin/maintenance", { value: "true" })).status, 303);
      assertEquals((await f.api.get("/api/v1/admin/maintenance", { token: f.admin })).body.enabled, true);
      assertEquals((await admin.postForm("/ui/admin/maintenance", { value: "false" })).status, 303);
      assertEquals((await f.api.get("/api/v1/admin/maintenance", { token: f.admin })).body.enabled, false);
      await admin.postForm("/ui/admin/users/bob/reset-2fa", {});
      const bob = await f.api.get("/api/v1/admin/users/bob", { token: f.admin });
      assertEquals(bob.body.two_factor_enabled, false);
    });

    await t.step("a box page with 100 versions renders in under 50 ms", async () => {
      await publishExternal(f, alice, "alice/big", "0.0.1", { isPrivate: false });
      for (let i = 1; i <= 100; i++) {
        const version = `1.${i}.0`;
        const base = `/api/v1/box/alice/big/version/${version}`;
        assertEquals(
          (await f.api.post("/api/v1/box/alice/big/versions", {
            version: { version, description: `Release **${i}** with [notes](https://example.com/${i})` },
          }, { token: alice })).status,
          200,
        );
        assertEquals(
          (await f.api.post(`${base}/providers`, {
            provider: {
              name: "virtualbox",
              url: `https://example.com/${i}.box`,
              checksum_type: "sha256",
              checksum: "a".repeat(64),
            },
          }, { token: alice })).status,
          200,
        );
        assertEquals((await f.api.put(`${base}/release`, {}, { token: alice })).status, 200);
      }
      const web = new WebClient(f.srv.url);
      const first = await web.get("/alice/boxes/big");
      assertEquals(first.status, 200);
      assertEquals(first.text.match(/class="version"/g)?.length, 101);
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const started = performance.now();
        await web.get("/alice/boxes/big");
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)]!;
      console.log(`box page with 100 versions: median ${median.toFixed(1)} ms (request over localhost)`);
      assert(median < 50, `median ${median} ms`);
    });
  } finally {
    await f.stop();
  }
});

Deno.test("web console sessions expire when idle and at their absolute limit, are Secure behind https; the login throttle applies", async (t) => {
  const f = await startRegistry({
    WHARF_CONSOLE_SESSION_IDLE: "1s",
    WHARF_CONSOLE_SESSION_MAX: "3s",
    WHARF_REGISTRY_LOGIN_FAILURES: "3",
    WHARF_PUBLIC_URL: "https://wharf.example",
  });
  try {
    await createUser(f, "carol");
    await t.step("idle expiry (and behind https the cookie is Secure)", async () => {
      const web = new WebClient(f.srv.url);
      assertEquals((await web.signIn("carol", "carol-password")).status, 303);
      const line = web.setCookies.find((l) => l.startsWith("wharf_session="))!;
      assert(/; Secure/.test(line) && /HttpOnly/.test(line) && /SameSite=Lax/.test(line), line);
      assertEquals((await web.get("/ui/settings/tokens")).status, 200);
      await new Promise((r) => setTimeout(r, 1300));
      const expired = await web.get("/ui/settings/tokens");
      assertEquals(expired.status, 303);
      assertEquals(expired.headers.get("location"), "/ui/login?next=%2Fui%2Fsettings%2Ftokens");
    });
    await t.step("absolute expiry, even while used", async () => {
      const web = new WebClient(f.srv.url);
      assertEquals((await web.signIn("carol", "carol-password")).status, 303);
      const started = Date.now();
      while (Date.now() - started < 2500) {
        assertEquals((await web.get("/ui/settings/tokens")).status, 200);
        await new Promise((r) => setTimeout(r, 500));
      }
      await new Promise((r) => setTimeout(r, 700));
      assertEquals((await web.get("/ui/settings/tokens")).status, 303);
    });
    await t.step("wrong passwords are throttled as on POST /api/v1/authenticate", async () => {
      const web = new WebClient(f.srv.url);
      for (let i = 0; i < 3; i++) assertEquals((await web.signIn("carol", "wrong-password")).status, 401);
      const throttled = await web.signIn("carol", "carol-password");
      assertEquals(throttled.status, 429);
      assert(throttled.text.includes("Rate limit exceeded"));
      const api = await f.api.post("/api/v1/authenticate", {
        user: { login: "carol", password: "carol-password" },
      });
      assertEquals(api.status, 429);
    });
  } finally {
    await f.stop();
  }
});

Deno.test("web console pages count against the registry's rate limit of the client's address", async () => {
  const f = await startRegistry({ WHARF_RATE_LIMIT_RPS: "1", WHARF_RATE_LIMIT_BURST: "3" });
  try {
    const web = new WebClient(f.srv.url);
    // The burst (3) is shared with the fixture's own sign-in over the API from the same address.
    const first = await web.get("/boxes/search");
    assertEquals(first.status, 200);
    let limited = first;
    for (let i = 0; i < 5 && limited.status !== 429; i++) limited = await web.get("/");
    assertEquals(limited.status, 429);
    assert(limited.headers.get("retry-after"));
    assert(limited.text.includes("Too many attempts"));
    // Assets are not counted.
    const css = /href="(\/ui\/assets\/[^"]+\.css)"/.exec(
      (await new WebClient(f.srv.url).get("/ui/nothing")).text,
    );
    if (css) assertEquals((await web.get(css[1]!)).status, 200);
  } finally {
    await f.stop();
  }
});
