// Sign in (password, then the two-factor code when the account has it on; or "Sign in with NAME" through an
// oidc sign-in method, docs/identity.md#oidc-sign-in) and sign out. The checks are the
// API's (POST /api/v1/authenticate): the same login throttle, maintenance rule and two-factor rules. A new
// session id at every sign-in; signing out ends the session.

import { ApiError } from "../../lib/errors.ts";
import { randomSecret } from "../../lib/ids.ts";
import { httpErrorOf } from "../../lib/store_http.ts";
import { hasControlOrSpace } from "../../lib/urls.ts";
import { type Credentials, requestCode, verifyLogin } from "../registry/services/tokens.ts";
import { completeOidcSignIn, startOidcSignIn } from "../registry/services/oidc_sign_in.ts";
import { signInAuthMethods } from "../registry/services/sign_in_methods.ts";
import { startSession } from "./sign_in_session.ts";
import { startCodeStep } from "./pages_login_code.ts";
import { type ConsoleReq, errorMessages } from "./context.ts";
import { field, loginForm, refuseCrossSite, signedInForm } from "./forms.ts";
import { html } from "./html.ts";
import { page, seeOther } from "./layout.ts";
import { cookieHeader, LOGIN_COOKIE, readCookie, SESSION_COOKIE } from "./session.ts";

/** Where to go after signing in: a local path only (no open redirect). */
export function safeNext(next: string | null | undefined): string {
  if (!next || !/^\/(?![/\\])/.test(next) || hasControlOrSpace(next)) return "/";
  // The canonical form (ASCII, percent-encoded) is what the Location header can carry (docs/security.md).
  const base = "http://wharf.invalid";
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return "/";
  }
  return url.origin === base ? url.pathname + url.search + url.hash : "/";
}

function loginPage(
  c: ConsoleReq,
  options: {
    login?: string;
    next: string;
    errors?: string[];
    needCode?: boolean;
    status?: number;
    notice?: string;
    /** Retry-After of a refusal (a throttle's 429, a busy 503), passed on to the browser. */
    retryAfter?: string | null;
  },
) {
  let cookie = readCookie(c.ctx.request, LOGIN_COOKIE);
  const headers = new Headers();
  if (options.retryAfter) headers.set("Retry-After", options.retryAfter);
  if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) {
    cookie = randomSecret(32);
    headers.append("Set-Cookie", cookieHeader(LOGIN_COOKIE, cookie, c.env.secureCookies, 3600));
  }
  const csrf = c.env.sessions.loginCsrf(cookie);
  // Only the methods a start is accepted for now: a listed method made inactive later is not offered.
  const providers = signInAuthMethods(c.reg).filter((m) =>
    m.type === "oidc" && (m.state === "active-public" || m.state === "active-private")
  );
  const body = html`
    <h1>Sign in</h1>
    ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ""}
    <form class="stack" method="post" action="/ui/login">
      <input type="hidden" name="_csrf" value="${csrf}">
      <input type="hidden" name="next" value="${options.next}">
      <div><label for="login">Username or e-mail</label>
      <input type="text" id="login" name="login" autocomplete="username" required value="${options.login ??
        ""}"></div>
      <div><label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required></div>
      <div><label for="code">Two-factor code <span class="hint">(only if your account has two-factor authentication on)</span></label>
      <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="16"${options
          .needCode
        ? html`
          aria-invalid="true"
        `
        : ""}></div>
      <div class="actions"><button type="submit">Sign in</button>
      <button type="submit" class="secondary" name="send_sms" value="1">Text me a code</button></div>
    </form>
    <p class="hint">"Text me a code" sends a two-factor code by SMS to accounts that have a mobile number.</p>
    ${providers.length
      ? html`
        <h2>Or</h2>
        <ul class="sign-in-with">${providers.map((m) =>
          html`<li><a class="button secondary" href="/ui/login/oidc/${m.id}">Sign in with ${
            m.name ?? m.id
          }</a></li>`
        )}</ul>
      `
      : ""}
  `;
  return page(c, {
    title: "Sign in",
    body,
    errors: options.errors ?? [],
    status: options.status ?? 200,
    headers,
  });
}

export function loginGet(c: ConsoleReq): Response {
  // Shown to a signed-in user too: signing in again (or as someone else) starts a new session.
  return loginPage(c, { next: safeNext(c.ctx.url.searchParams.get("next")) });
}

export async function loginPost(c: ConsoleReq): Promise<Response> {
  const form = await loginForm(c);
  const login = field(form, "login");
  const next = safeNext(form.get("next"));
  const code = field(form, "code");
  const credentials = { login, password: form.get("password") ?? "" };
  if (form.get("send_sms")) return await sendSmsCode(c, credentials, login, next);
  let found;
  try {
    found = await verifyLogin(c.reg, c.ctx, credentials, code ? code : undefined);
  } catch (thrown) {
    const err = httpErrorOf(thrown);
    if (!(err instanceof ApiError) || ![401, 406, 422, 429, 503].includes(err.status)) throw err;
    const needCode = err.status === 406;
    const errors = needCode && !code
      ? ["Enter the code from your authenticator app (or the SMS) to sign in."]
      : errorMessages(err);
    const status = err.status === 406 ? 401 : err.status;
    return loginPage(c, { login, next, errors, needCode, status, retryAfter: retryAfterOf(err) });
  }
  return await startSession(c, found, next);
}

/** Binds a started OIDC sign-in to this browser: the method and the attempt's token id, until it completes. */
const OIDC_COOKIE = "wharf_oidc";

/**
 * "Sign in with NAME" (a link: the page's CSP lets forms post only to the console, and a form's redirect to
 * the provider would be refused): starts the oidc sign-in method's login and sends the browser there. Each
 * start is a durable attempt, bounded per client address (docs/security.md). A start another site made the
 * browser send (an image, a link elsewhere) is refused before anything is counted or stored.
 */
export async function oidcStartGet(c: ConsoleReq): Promise<Response> {
  refuseCrossSiteStart(c);
  const methodId = c.ctx.params.id ?? "";
  return await onLoginPage(c, [400, 404, 429, 503], async () => {
    const started = await startOidcSignIn(c.reg, c.ctx, methodId, OIDC_COOKIE);
    const headers = new Headers();
    headers.append(
      "Set-Cookie",
      cookieHeader(OIDC_COOKIE, `${methodId}.${started.tokenId}`, c.env.secureCookies, 600),
    );
    return seeOther(c, started.authUrl, undefined, headers);
  });
}

/**
 * 403 for a start whose `Sec-Fetch-Site` is present and neither `same-origin` (the login page's link) nor
 * `none` (typed, a bookmark): browsers send it, so a cross-site `<img>` cannot spend the address's start
 * budget (WHARF_OIDC_STARTS_PER_MINUTE). Without the header (not a browser) the start is allowed.
 */
function refuseCrossSiteStart(c: ConsoleReq): void {
  const site = c.ctx.request.headers.get("sec-fetch-site");
  if (site === null || site === "same-origin" || site === "none") return;
  throw new ApiError(
    403,
    "This sign-in was not started from a wharf page (cross-site request refused). Start it from the sign-in page.",
  );
}

/** Where the auth method's callback ends: the attempt this browser started, collected into a console session. */
export async function oidcCompleteGet(c: ConsoleReq): Promise<Response> {
  const bound = readCookie(c.ctx.request, OIDC_COOKIE) ?? "";
  const match = /^(amoidc_[A-Za-z0-9]{1,64})\.(oidc_[A-Za-z0-9_-]{1,64})$/.exec(bound);
  return await onLoginPage(c, [401, 404, 409, 503], async () => {
    if (!match) throw new ApiError(401, "No sign-in with an identity provider was started in this browser.");
    const signedIn = await completeOidcSignIn(c.reg, c.ctx, match[1]!, match[2]!);
    // Two-factor on: the registry's code step before the session (docs/identity.md#oidc-sign-in).
    if (signedIn.needsCode) return await startCodeStep(c, signedIn.user, signedIn.via, [OIDC_COOKIE]);
    return await startSession(c, signedIn.user, "/", [OIDC_COOKIE]);
  });
}

/** `run`'s answer, or the sign-in page with the message of a refusal whose status is one of `shown`. */
async function onLoginPage(c: ConsoleReq, shown: number[], run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (thrown) {
    const err = httpErrorOf(thrown);
    if (!(err instanceof ApiError) || !shown.includes(err.status)) throw err;
    return loginPage(c, {
      next: "/",
      errors: errorMessages(err),
      status: err.status,
      retryAfter: retryAfterOf(err),
    });
  }
}

/** Requests an SMS code as POST /api/v1/two-factor/request-code does (credentials checked and throttled). */
async function sendSmsCode(c: ConsoleReq, credentials: Credentials, login: string, next: string) {
  try {
    const sent = await requestCode(c.reg, c.ctx, credentials, "sms");
    return loginPage(c, {
      login,
      next,
      notice: `A code was sent to the ${sent}. Enter it with your password.`,
    });
  } catch (thrown) {
    const err = httpErrorOf(thrown);
    if (!(err instanceof ApiError) || ![401, 422, 429, 500, 503].includes(err.status)) throw err;
    return loginPage(c, {
      login,
      next,
      errors: errorMessages(err),
      status: err.status,
      retryAfter: retryAfterOf(err),
    });
  }
}

function retryAfterOf(err: ApiError): string | null {
  return new Headers(err.headers).get("Retry-After");
}

export function logoutGet(c: ConsoleReq): Response {
  if (!c.session) return seeOther(c, "/");
  const body = html`
    <h1>Sign out</h1>
    <form method="post" action="/ui/logout">
      <input type="hidden" name="_csrf" value="${c.session
        .csrf}"><button type="submit">Sign out</button></form>
  `;
  return page(c, { title: "Sign out", body });
}

export async function logoutPost(c: ConsoleReq): Promise<Response> {
  refuseCrossSite(c);
  if (c.session) {
    await signedInForm(c);
    await c.env.sessions.end(c.session);
  }
  const headers = { "Set-Cookie": cookieHeader(SESSION_COOKIE, "", c.env.secureCookies, 0) };
  return seeOther({ ...c, session: undefined }, "/", undefined, headers);
}
