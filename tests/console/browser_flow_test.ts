// The web console in a real Chromium (Debian's chromium, driven by puppeteer-core): sign in with and without
// two-factor, create a token and use it with the API, publish a box with two architectures through the pages with
// real file uploads, find it through search, download it from the box page, revoke a version, sign out and see
// the private box disappear. Screenshots of the main pages go to docs/screenshots/ with WHARF_SCREENSHOTS=1.

import * as OTPAuth from "otpauth";
import type { Page } from "puppeteer-core";
import { assert, assertEquals } from "../helpers/assert.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { createOrg, createUser, startRegistry } from "../registry/helpers.ts";
import { browserTest, clickAndWait, fill, launchBrowser, screenshot } from "./helpers.ts";

async function text(page: Page): Promise<string> {
  return await page.$eval("main", (m) => (m as unknown as { innerText: string }).innerText);
}

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

browserTest(
  "web console in Chromium: sign in, token, publish two architectures, search, download, revoke, sign out, two-factor",
  async (t) => {
    const f = await startRegistry();
    const { browser, close } = await launchBrowser();
    const tmp = await Deno.makeTempDir({ prefix: "wharf-console-files-" });
    try {
      await createUser(f, "alice");
      await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
      const base = f.srv.url;
      const page = await browser.newPage();
      await page.setViewport({ width: 1100, height: 900 });
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(`page error: ${e}`));
      page.on("console", (m) => {
        // Pages answered 404 or 401 on purpose log "Failed to load resource"; anything else (a CSP refusal) counts.
        if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) {
          problems.push(`console error: ${m.text()}`);
        }
      });
      const go = async (path: string) => await page.goto(base + path, { waitUntil: "load" });

      const signIn = async (password: string, code?: string) => {
        await go("/ui/login");
        await fill(page, "#login", "alice");
        await fill(page, "#password", password);
        if (code) await fill(page, "#code", code);
        await clickAndWait(page, "main form button[type=submit]");
      };
      const signOut = async () => await clickAndWait(page, "header form[action='/ui/logout'] button");

      await t.step("sign in without two-factor", async () => {
        await go("/ui/login");
        await signIn("alice-password");
        assertEquals(new URL(page.url()).pathname, "/");
        assert((await text(page)).includes("Signed in as alice."));
      });

      await t.step("create a token and use it with the API", async () => {
        await go("/ui/settings/tokens");
        await fill(page, "#description", "CI pipeline");
        await clickAndWait(page, "main form[action='/ui/settings/tokens'] button");
        const token = await page.$eval("#token-value", (e) => e.textContent ?? "");
        assert(token.startsWith("wharf_"), token);
        const who = await f.api.get("/api/v1/authenticate", { token });
        assertEquals(who.status, 200);
        assertEquals(who.body, { user: { username: "alice" } });
        assert((await text(page)).includes("CI pipeline"));
        await go("/ui/settings/tokens");
        assert(!(await text(page)).includes(token), "the token is shown only once");
      });

      const files = { amd64: randomBytes(3 * 1024 * 1024 + 17), arm64: randomBytes(1024 * 1024 + 3) };
      await t.step(
        "publish a box with two architectures through the pages, uploading real files",
        async () => {
          await go("/ui/boxes/new");
          await fill(page, "#name", "devbox");
          await fill(page, "#short_description", "A development box for the console test");
          await fill(
            page,
            "#description",
            "# Devbox\n\nUbuntu with **build tools**. See [the docs](https://example.com/docs).",
          );
          await clickAndWait(page, "main form button[type=submit]");
          assertEquals(new URL(page.url()).pathname, "/alice/boxes/devbox");
          assert((await page.$eval(".markdown strong", (e) => e.textContent)) === "build tools");
          await clickAndWait(page, "a[href='/ui/boxes/alice/devbox/versions/new']");
          await fill(page, "#version", "1.0.0");
          await fill(page, "#description", "First release.");
          await clickAndWait(page, "main form button[type=submit]");
          assertEquals(new URL(page.url()).pathname, "/alice/boxes/devbox/versions/1.0.0");
          for (const arch of ["amd64", "arm64"] as const) {
            await fill(page, "#provider-name", "virtualbox");
            await page.select("#provider-architecture", arch);
            if (arch === "amd64") await page.click("#provider-default");
            await clickAndWait(page, "form[action$='/providers'] button");
            assert((await text(page)).includes("Provider added"), await text(page));
          }
          for (const arch of ["amd64", "arm64"] as const) {
            const path = `${tmp}/${arch}.box`;
            await Deno.writeFile(path, files[arch]);
            const input = await page.$(`#file-virtualbox-${arch}`);
            await input!.uploadFile(path);
            await clickAndWait(page, `form[action$='/virtualbox/${arch}/upload'] button`);
          }
          const body = await text(page);
          assert(body.includes(sha256Hex(files.amd64)) && body.includes(sha256Hex(files.arm64)), body);
          await screenshot(page, "version");
          await clickAndWait(page, "form[action$='/release'] button");
          assert((await text(page)).includes("Version released."));
          const api = await f.api.post("/api/v1/authenticate", {
            user: { login: "alice", password: "alice-password" },
          });
          const box = await f.api.get("/api/v2/box/alice/devbox", { token: api.body.token });
          assertEquals(box.body.current_version.version, "1.0.0");
          const archs = box.body.current_version.providers.map((p: { architecture: string }) =>
            p.architecture
          ).sort();
          assertEquals(archs, ["amd64", "arm64"]);
          assertEquals(box.body.private, true);
        },
      );

      await t.step("find it through search", async () => {
        await go("/boxes/search?q=devbox&architecture=arm64");
        assert((await text(page)).includes("alice/devbox"));
        await go("/boxes/search?q=devbox&architecture=s390x");
        assert(!(await text(page)).includes("alice/devbox"));
        await go("/boxes/search?q=dev");
        await screenshot(page, "search");
        await go("/");
        await screenshot(page, "home");
      });

      await t.step("download it from the box page", async () => {
        await go("/alice/boxes/devbox");
        await screenshot(page, "box");
        const downloads = await Deno.makeTempDir({ dir: tmp });
        const cdp = await page.createCDPSession();
        await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
        await page.click("a[href$='/versions/1.0.0/providers/virtualbox/arm64/vagrant.box']");
        let got: Uint8Array | undefined;
        for (let i = 0; i < 100 && !got; i++) {
          await new Promise((r) => setTimeout(r, 100));
          for (const e of Deno.readDirSync(downloads)) {
            if (!e.name.endsWith(".crdownload")) got = await Deno.readFile(`${downloads}/${e.name}`);
          }
        }
        assert(got, "the download finished");
        assertEquals(sha256Hex(got), sha256Hex(files.arm64));
      });

      await t.step("revoke a version", async () => {
        await go("/ui/boxes/alice/devbox/versions/new");
        await fill(page, "#version", "1.1.0");
        await clickAndWait(page, "main form button[type=submit]");
        await fill(page, "#provider-name", "virtualbox");
        await page.select("#provider-architecture", "amd64");
        await fill(page, "#provider-url", "https://example.com/devbox-1.1.0.box");
        await clickAndWait(page, "form[action$='/providers'] button");
        await clickAndWait(page, "form[action$='/release'] button");
        await clickAndWait(page, "a[href$='/versions/1.1.0/revoke']");
        assert((await text(page)).includes("Revoke v1.1.0?"));
        await clickAndWait(page, "main form button.danger");
        assert((await text(page)).includes("Version revoked."));
        const meta = await f.api.get("/alice/devbox", {
          token: (await f.api.post("/api/v1/authenticate", {
            user: { login: "alice", password: "alice-password" },
          }))
            .body.token,
        });
        assertEquals(meta.body.versions.map((v: { version: string }) => v.version), ["1.0.0"]);
      });

      await t.step("sign out and see the private box disappear", async () => {
        await signOut();
        assertEquals(new URL(page.url()).pathname, "/");
        const answer = await go("/alice/boxes/devbox");
        assertEquals(answer!.status(), 404);
        await go("/boxes/search?q=devbox");
        assert(!(await text(page)).includes("alice/devbox"));
        const file = await page.evaluate(
          async (url) => (await fetch(url)).status,
          `${base}/alice/boxes/devbox/versions/1.0.0/providers/virtualbox/arm64/vagrant.box`,
        );
        assertEquals(file, 404);
      });

      await t.step("turn on two-factor with the QR code page, then sign in with a code", async () => {
        await signIn("alice-password");
        await go("/ui/settings/security");
        await clickAndWait(page, "form[action='/ui/settings/security/totp'] button");
        assert(await page.$(".qr svg"), "the QR code is shown");
        await screenshot(page, "security");
        const secret = (await page.$eval("main .secret", (e) => e.textContent ?? "")).trim();
        const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
        await fill(page, "#totp-code", totp.generate());
        await clickAndWait(page, "form[action='/ui/settings/security/totp/confirm'] button");
        assert((await text(page)).includes("Two-factor authentication is on."));
        await signOut();
        await signIn("alice-password");
        assert((await text(page)).includes("Enter the code"), await text(page));
        assertEquals(new URL(page.url()).pathname, "/ui/login");
        // The code of the next time step: the one used to confirm may not be used again.
        await signIn("alice-password", totp.generate({ timestamp: Date.now() + 30_000 }));
        assert((await text(page)).includes("Signed in as alice."), await text(page));
      });

      assertEquals(problems, [], "no script errors and no CSP violations");
    } finally {
      await close();
      await f.stop();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
);
