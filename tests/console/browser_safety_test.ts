// The web console's safety and accessibility in a real Chromium: an XSS attempt in each user-editable field stays
// inert on every page that shows it, a cross-site form post is refused, axe-core finds no serious or critical
// violation on any page type, and pages fit a phone's width.

import type { Page } from "puppeteer-core";
import { assert, assertEquals } from "../helpers/assert.ts";
import { createOrg, createUser, publishExternal, startRegistry } from "../registry/helpers.ts";
import { browserTest, clickAndWait, fill, launchBrowser, screenshot, seriousViolations } from "./helpers.ts";

const PAYLOAD =
  `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>"'><svg onload="window.__xss=3">` +
  ` [click me](javascript:window.__xss=4) <a href="javascript:window.__xss=5">raw</a>`;

/** What an injected payload would have left in the page. */
async function injected(page: Page) {
  return await page.evaluate(() => {
    // deno-lint-ignore no-explicit-any
    const d = (globalThis as any).document;
    return {
      // deno-lint-ignore no-explicit-any
      ran: (globalThis as any).__xss ?? null,
      images: d.querySelectorAll("img[src='x']").length,
      handlers: d.querySelectorAll("[onerror],[onload],[onclick]").length,
      scripts: [...d.querySelectorAll("script")].filter((s: { src: string }) =>
        !s.src.includes("/ui/assets/")
      ).length,
      jsLinks: d.querySelectorAll("a[href^='javascript:' i]").length,
      text: d.body.innerText as string,
    };
  });
}

browserTest(
  "web console in Chromium: XSS stays inert, cross-site posts are refused, axe finds no serious violation",
  async (t) => {
    const f = await startRegistry();
    const { browser, close } = await launchBrowser();
    let attacker: Deno.HttpServer | undefined;
    try {
      const alice = await createUser(f, "alice");
      await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
      await publishExternal(f, alice, "alice/plainbox", "1.0.0", { isPrivate: false });
      assertEquals(
        (await f.api.put("/api/v1/admin/users/alice", { user: { profile: PAYLOAD } }, { token: f.admin }))
          .status,
        200,
      );
      const base = f.srv.url;
      const page = await browser.newPage();
      await page.setViewport({ width: 1100, height: 900 });
      // axe-core is injected as an inline script, which the console's CSP (rightly) refuses.
      await page.setBypassCSP(true);
      const go = async (path: string) => await page.goto(base + path, { waitUntil: "load" });
      const signIn = async (login: string, password: string) => {
        await go("/ui/login");
        await fill(page, "#login", login);
        await fill(page, "#password", password);
        await clickAndWait(page, "main form button[type=submit]");
        assert((await page.content()).includes(`Signed in as ${login}`));
      };

      await t.step("an XSS attempt in each user-editable field stays inert", async () => {
        await signIn("alice", "alice-password");
        // Box short description and description, version description (through the pages).
        await go("/ui/boxes/new");
        await fill(page, "#name", "xssbox");
        await fill(page, "#short_description", PAYLOAD.slice(0, 250));
        await fill(page, "#description", PAYLOAD);
        await page.click("#private"); // public, so search and the home page show it
        await clickAndWait(page, "main form button[type=submit]");
        await go("/ui/boxes/alice/xssbox/versions/new");
        await fill(page, "#version", "1.0.0");
        await fill(page, "#description", PAYLOAD);
        await clickAndWait(page, "main form button[type=submit]");
        assertEquals(
          new URL(page.url()).pathname,
          "/alice/boxes/xssbox/versions/1.0.0",
          await page.content(),
        );
        await fill(page, "#provider-name", "virtualbox");
        await fill(page, "#provider-url", "https://example.com/x.box");
        await clickAndWait(page, "form[action$='/providers'] button");
        await clickAndWait(page, "form[action$='/release'] button");
        // A provider URL that is not http(s) is refused by the registry's rules.
        await go("/alice/boxes/xssbox/versions/1.0.0");
        await fill(page, "#provider-name", "libvirt");
        await fill(page, "#provider-url", "javascript:window.__xss=6");
        await page.$eval("#provider-url", (e) => (e as unknown as { type: string }).type = "text");
        await clickAndWait(page, "form[action$='/providers'] button");
        assert(
          (await page.$eval("main", (m) => (m as unknown as { innerText: string }).innerText)).includes(
            "That did not work",
          ),
        );
        // Token description, service principal name.
        await go("/ui/settings/tokens");
        await fill(page, "#description", PAYLOAD.slice(0, 250));
        await clickAndWait(page, "main form[action='/ui/settings/tokens'] button");
        await go("/ui/orgs/acme");
        await fill(page, "#sp-name", PAYLOAD.slice(0, 250));
        await clickAndWait(page, "form[action$='/service-principals'] button");
        // An e-mail address an admin typed (the pattern lets markup through).
        const email = `x<svg/onload=window.__xss=7>@evil.io`;
        assertEquals(
          (await f.api.post("/api/v1/admin/users", {
            user: { username: "mallory", email, password: "mallory-password" },
          }, { token: f.admin })).status,
          200,
        );

        const pages = [
          "/",
          "/boxes/search?q=xssbox",
          "/alice",
          "/alice/boxes/xssbox",
          "/alice/boxes/xssbox/versions/1.0.0",
          "/ui/boxes/alice/xssbox/edit",
          "/ui/settings/tokens",
          "/ui/orgs/acme",
        ];
        for (const path of pages) {
          await go(path);
          const found = await injected(page);
          assertEquals({ ...found, text: "" }, {
            ran: null,
            images: 0,
            handlers: 0,
            scripts: 0,
            jsLinks: 0,
            text: "",
          }, path);
          if (path !== "/ui/boxes/alice/xssbox/edit") {
            assert(found.text.includes("<img src=x"), `${path} shows the text`);
          }
        }
        await signIn("admin", "admin-password-1");
        await go("/ui/admin");
        const admin = await injected(page);
        assertEquals(admin.ran, null);
        assertEquals(admin.handlers, 0);
        assert(admin.text.includes("x<svg/onload=window.__xss=7>@evil.io"));
      });

      await t.step("a cross-site form post is refused", async () => {
        await signIn("alice", "alice-password");
        // Another site (localhost is not 127.0.0.1) posts a form to wharf while alice is signed in.
        const evil = `<!doctype html><html lang="en"><title>evil</title><body>
        <form id="f" method="post" action="${base}/ui/boxes/new">
        <input name="owner" value="alice"><input name="name" value="pwned"><input name="_csrf" value="guess"></form>
        <form id="g" method="post" action="${base}/ui/settings/tokens"><input name="description" value="stolen"></form>
        <script>document.getElementById(location.hash === "#g" ? "g" : "f").submit();</script></body></html>`;
        attacker = Deno.serve(
          { hostname: "127.0.0.1", port: 0, onListen() {} },
          () => new Response(evil, { headers: { "Content-Type": "text/html" } }),
        );
        const evilUrl = `http://localhost:${(attacker.addr as Deno.NetAddr).port}/`;
        for (const hash of ["", "#g"]) {
          // The attacker's page submits its form at once: wait until the browser shows wharf's answer.
          await page.goto(evilUrl + hash, { waitUntil: "load" }).catch(() => undefined);
          let status = "";
          for (let i = 0; i < 100; i++) {
            status = page.url().startsWith(base)
              ? await page.evaluate(() =>
                (globalThis as unknown as { document: { title: string } }).document.title
              )
                .catch(() => "")
              : "";
            if (status) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          assert(/Not allowed|Sign in/.test(status), status);
        }
        assertEquals((await f.api.get("/api/v1/box/alice/pwned", { token: alice })).status, 404);
        const tokens = await f.api.get("/api/v1/admin/users/alice/tokens", { token: f.admin });
        assert(!tokens.body.tokens.some((x: { description: string }) => x.description === "stolen"));
      });

      await t.step("axe-core finds no serious or critical violation on any page type", async () => {
        await signIn("alice", "alice-password");
        await go("/ui/boxes/alice/xssbox/versions/new");
        await fill(page, "#version", "2.0.0");
        await clickAndWait(page, "main form button[type=submit]");
        const signedIn = [
          "/",
          "/boxes/search?q=box",
          "/boxes/search?sort=bogus",
          "/alice",
          "/acme",
          "/ui/orgs/acme",
          "/alice/boxes/plainbox",
          "/alice/boxes/xssbox",
          "/alice/boxes/xssbox/versions/2.0.0",
          "/ui/boxes/new",
          "/ui/boxes/alice/xssbox/edit",
          "/ui/boxes/alice/xssbox/versions/new",
          "/ui/boxes/alice/xssbox/versions/1.0.0/revoke",
          "/ui/boxes/alice/xssbox/delete",
          "/ui/boxes/alice/xssbox/versions/1.0.0/providers/virtualbox/unknown/delete",
          "/ui/settings/tokens",
          "/ui/settings/security",
          "/ui/logout",
          "/alice/boxes/nothing",
        ];
        const report: string[] = [];
        const check = async (path: string) => {
          await go(path);
          for (const v of await seriousViolations(page)) {
            report.push(`${path}: ${v.id} (${v.impact}) ${v.help} ${v.nodes.join(" | ")}`);
          }
        };
        for (const path of signedIn) await check(path);
        await go("/ui/settings/security");
        await clickAndWait(page, "form[action='/ui/settings/security/totp'] button");
        for (const v of await seriousViolations(page)) report.push(`security (QR): ${v.id} ${v.help}`);
        await signIn("admin", "admin-password-1");
        await check("/ui/admin");
        await screenshot(page, "admin");
        await clickAndWait(page, "header form[action='/ui/logout'] button");
        for (
          const path of ["/", "/ui/login", "/alice/boxes/plainbox", "/alice/boxes/plainbox/versions/1.0.0"]
        ) await check(path);
        await go("/ui/login");
        await fill(page, "#login", "alice");
        await fill(page, "#password", "wrong-password");
        await clickAndWait(page, "main form button[type=submit]");
        for (const v of await seriousViolations(page)) report.push(`login error: ${v.id} ${v.help}`);
        assertEquals(report, []);
      });

      await t.step("pages fit a phone's width", async () => {
        await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
        for (const path of ["/", "/boxes/search?q=box", "/alice/boxes/plainbox", "/ui/login"]) {
          await go(path);
          const overflow = await page.evaluate(() => {
            // deno-lint-ignore no-explicit-any
            const g = globalThis as any;
            return g.document.documentElement.scrollWidth - g.innerWidth;
          });
          assert(overflow <= 0, `${path} is ${overflow}px wider than the phone`);
        }
        await go("/alice/boxes/plainbox");
        await screenshot(page, "phone-box");
      });
    } finally {
      await attacker?.shutdown();
      await close();
      await f.stop();
    }
  },
);
