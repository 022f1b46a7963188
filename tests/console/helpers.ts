// Helpers for the web console's tests: a cookie-keeping HTTP client that signs in through the pages and posts
// forms with their CSRF token, and the real Chromium the browser tests drive (skipped, saying so, without it).

import puppeteer, { type Browser, type Page } from "puppeteer-core";
import axe from "axe-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why browser tests cannot run here, or undefined when Chromium is installed. */
export function browserSkipReason(): string | undefined {
  try {
    Deno.statSync(CHROMIUM);
    return undefined;
  } catch {
    return `${CHROMIUM} is not installed (apt-get install chromium; .ci/run installs it)`;
  }
}

/** Registers a browser test, ignored (with a clear message) when Chromium is missing. */
export function browserTest(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  const reason = browserSkipReason();
  if (reason) console.warn(`SKIPPED browser test "${name}": ${reason}`);
  Deno.test({ name, ignore: reason !== undefined, sanitizeOps: false, sanitizeResources: false, fn });
}

export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "wharf-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    userDataDir: dir,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in the page; the serious and critical violations. */
// deno-lint-ignore no-explicit-any
export async function seriousViolations(page: any): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axe.source });
  const result = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const r = await (globalThis as any).axe.run((globalThis as any).document, {
      resultTypes: ["violations"],
    });
    // deno-lint-ignore no-explicit-any
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      // deno-lint-ignore no-explicit-any
      nodes: v.nodes.slice(0, 3).map((n: any) => n.html),
    }));
  });
  return (result as AxeViolation[]).filter((v) => v.impact === "serious" || v.impact === "critical");
}

const screenshotDir = new URL("../../docs/screenshots/", import.meta.url);
const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Takes a screenshot of the page (a PNG, or the test fails) and, only with WHARF_SCREENSHOTS=1, writes it into
 * docs/screenshots/ (the docs show them): ordinary runs leave the committed images alone.
 */
// deno-lint-ignore no-explicit-any
export async function screenshot(page: any, name: string): Promise<void> {
  const png: Uint8Array = await page.screenshot({ type: "png" });
  if (png.length <= pngSignature.length || pngSignature.some((b, i) => png[i] !== b)) {
    throw new Error(`the screenshot "${name}" is not a PNG image`);
  }
  if (Deno.env.get("WHARF_SCREENSHOTS") !== "1") return;
  await Deno.mkdir(screenshotDir, { recursive: true });
  await Deno.writeFile(new URL(`${name}.png`, screenshotDir), png);
}

/** Sets a form field's value as typing would, without typing delays. */
export async function fill(page: Page, selector: string, value: string): Promise<void> {
  await page.$eval(selector, (el, v) => {
    (el as unknown as { value: string }).value = v as string;
  }, value);
}

/** Clicks and waits for the page it leads to. */
export async function clickAndWait(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
}

/** The value of the last input named `name` in `html` (the page's own form comes after the header's). */
export function inputValue(html: string, name: string): string | undefined {
  const all = [...html.matchAll(new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`, "g"))];
  return all.at(-1)?.[1]?.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(
    /&lt;/g,
    "<",
  )
    .replace(/&gt;/g, ">");
}

export interface PageAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** A browser-like HTTP client: keeps cookies, asks for HTML, does not follow redirects. */
export class WebClient {
  readonly url: string;
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that had one. */
  csrf: string | undefined;
  /** Every Set-Cookie line received, for attribute checks. */
  readonly setCookies: string[] = [];

  constructor(url: string) {
    this.url = url;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async request(
    method: string,
    path: string,
    init: { body?: string; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = {
      Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      ...init.headers,
    };
    if (this.cookies.size) headers.Cookie = this.cookieHeader();
    const response = await fetch(this.url + path, { method, headers, body: init.body, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const token = inputValue(text, "_csrf");
    if (token) this.csrf = token;
    return { status: response.status, headers: response.headers, text } as PageAnswer;
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.request("GET", path, { headers });
  }

  /** Posts a form with the last CSRF token seen (unless `_csrf` is given, or null to leave it out). */
  postForm(path: string, fields: Record<string, string | null>, headers: Record<string, string> = {}) {
    const form = new URLSearchParams();
    const withToken = { _csrf: this.csrf ?? null, ...fields };
    for (const [k, v] of Object.entries(withToken)) if (v !== null) form.set(k, v);
    return this.request("POST", path, {
      body: form.toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    });
  }

  /** Signs in through /ui/login; the answer of the post (303 when it worked). */
  async signIn(login: string, password: string, code?: string): Promise<PageAnswer> {
    await this.get("/ui/login");
    const fields: Record<string, string> = { login, password, next: "/" };
    if (code) fields.code = code;
    const answer = await this.postForm("/ui/login", fields);
    if (answer.status === 303) await this.get("/"); // picks up the session's CSRF token
    return answer;
  }
}
