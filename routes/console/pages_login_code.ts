// The two-factor code step of an OIDC sign-in (docs/identity.md#oidc-sign-in): the first factor's outcome sealed
// into a cookie bound to this browser's pre-login cookie with the id of a stored step (valid 5 minutes, used up
// by the sign-in it completes, on any node), an SMS code sent on request (the password form's limit of
// requests), the registry's code check with the password form's throttle of wrong codes, then the session.

import { ApiError } from "../../lib/errors.ts";
import { randomSecret } from "../../lib/ids.ts";
import type { VerifiedIdentity } from "../../lib/identity.ts";
import type { StoredDoc } from "../../lib/store/mod.ts";
import { httpErrorOf } from "../../lib/store_http.ts";
import type { UserDoc } from "../registry/core/model.ts";
import {
  completeOidcSecondFactor,
  pendingOidcUser,
  requestOidcSmsCode,
} from "../registry/services/oidc_sign_in.ts";
import { type ConsoleReq, errorMessages } from "./context.ts";
import { field, loginForm } from "./forms.ts";
import { html } from "./html.ts";
import { page, seeOther } from "./layout.ts";
import { cookieHeader, LOGIN_COOKIE, readCookie } from "./session.ts";
import { startSession } from "./sign_in_session.ts";

const CODE_COOKIE = "wharf_2fa";
const CODE_STEP_MS = 5 * 60_000;
export const CODE_STEP_PATH = "/ui/login/code";

/** What the code step carries from the OIDC callback to the code form. */
interface PendingCode {
  username: string;
  via: VerifiedIdentity;
  /** The stored step's id (code_steps.ts): the step is over once it is used. */
  step: string;
}

/**
 * After the OIDC callback of a user with two-factor on: a stored step (that user's oldest beyond 5 go), sealed
 * with the first factor's outcome into a cookie, and the browser sent to the code form.
 */
export async function startCodeStep(
  c: ConsoleReq,
  user: StoredDoc<UserDoc>,
  via: VerifiedIdentity,
  clear: string[],
): Promise<Response> {
  const secure = c.env.secureCookies;
  const headers = new Headers();
  let cookie = readCookie(c.ctx.request, LOGIN_COOKIE);
  if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) {
    cookie = randomSecret(32);
    headers.append("Set-Cookie", cookieHeader(LOGIN_COOKIE, cookie, secure, 3600));
  }
  const pending: PendingCode = {
    username: user.id,
    via,
    step: await c.env.codeSteps.open(user.id, CODE_STEP_MS),
  };
  const sealed = c.env.sessions.sealPending(cookie, pending, CODE_STEP_MS);
  headers.append("Set-Cookie", cookieHeader(CODE_COOKIE, sealed, secure, CODE_STEP_MS / 1000));
  for (const name of clear) headers.append("Set-Cookie", cookieHeader(name, "", secure, 0));
  return seeOther(c, CODE_STEP_PATH, undefined, headers);
}

/** This browser's pending step: undefined when absent, another browser's, expired or used already. */
function pendingOf(c: ConsoleReq): PendingCode | undefined {
  const cookie = readCookie(c.ctx.request, LOGIN_COOKIE);
  if (!cookie) return undefined;
  const pending = c.env.sessions.openPending<PendingCode>(cookie, readCookie(c.ctx.request, CODE_COOKIE));
  if (typeof pending?.step !== "string" || !c.env.codeSteps.waits(pending.username, pending.step)) {
    return undefined;
  }
  return pending;
}

const noStep =
  "No sign-in waits for a two-factor code in this browser (it expired or was used already); sign in again.";

function codePage(
  c: ConsoleReq,
  options: {
    errors?: string[];
    status?: number;
    retryAfter?: string | null;
    form: boolean;
    notice?: string;
    /** The user has a mobile number: offer "Text me a code". */
    sms?: boolean;
  },
): Response {
  const cookie = readCookie(c.ctx.request, LOGIN_COOKIE) ?? "";
  const headers = new Headers();
  if (options.retryAfter) headers.set("Retry-After", options.retryAfter);
  const body = options.form
    ? html`
      <h1>Two-factor code</h1>
      ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ""}
      <form class="stack" method="post" action="${CODE_STEP_PATH}">
        <input type="hidden" name="_csrf" value="${c.env.sessions.loginCsrf(cookie)}">
        <div><label for="code">Two-factor code <span class="hint">(from your authenticator app, or the SMS)</span></label>
        <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus></div>
        <div class="actions"><button type="submit">Sign in</button>${options.sms
          ? html`
            <button type="submit" class="secondary" name="send_sms" value="1" formnovalidate>Text me a code</button>
          `
          : ""}</div>
      </form>
    `
    : html`
      <h1>Two-factor code</h1>
      <p><a href="/ui/login">Sign in again</a></p>
    `;
  const { errors = [], status = 200 } = options;
  return page(c, { title: "Two-factor code", body, errors, status, headers });
}

/** Whether the pending sign-in's user can be texted a code (has a mobile number). */
function smsOffered(c: ConsoleReq, pending: PendingCode): boolean {
  return Boolean(c.reg.user(pending.username)?.doc.mobile);
}

export function codeGet(c: ConsoleReq): Response {
  const pending = pendingOf(c);
  if (!pending) return codePage(c, { errors: [noStep], status: 401, form: false });
  let user: StoredDoc<UserDoc>;
  try {
    // No form for a sign-in that no longer stands (the posts refuse it as well).
    user = pendingOidcUser(c.reg, pending.username, pending.via);
  } catch (thrown) {
    return refusedCodePage(c, thrown, [401, 503]);
  }
  return codePage(c, { form: true, sms: Boolean(user.doc.mobile) });
}

export async function codePost(c: ConsoleReq): Promise<Response> {
  const form = await loginForm(c);
  const pending = pendingOf(c);
  if (!pending) return codePage(c, { errors: [noStep], status: 401, form: false });
  if (form.get("send_sms")) return await sendSmsCode(c, pending);
  const code = field(form, "code");
  try {
    const user = await completeOidcSecondFactor(
      c.reg,
      c.ctx,
      pending.username,
      pending.via,
      code || undefined,
      async () => {
        if (await c.env.codeSteps.use(pending.username, pending.step)) return;
        throw new ApiError(401, "This sign-in expired or was used already; start again.");
      },
    );
    return await startSession(c, user, "/", [CODE_COOKIE]);
  } catch (thrown) {
    return refusedCodePage(
      c,
      thrown,
      [401, 406, 429, 503],
      pending,
      (err) =>
        err.status === 406 && !code
          ? ["Enter the code from your authenticator app (or the SMS) to sign in."]
          : errorMessages(err),
    );
  }
}

/**
 * "Text me a code" on the code step: an SMS code for the pending sign-in's user, no password asked (the first
 * factor passed at the provider), under the password form's per-user limit of code requests.
 */
async function sendSmsCode(c: ConsoleReq, pending: PendingCode): Promise<Response> {
  try {
    const sent = await requestOidcSmsCode(c.reg, pending.username, pending.via);
    return codePage(c, {
      form: true,
      sms: true,
      notice: `A code was sent to the ${sent}. Enter it to sign in.`,
    });
  } catch (thrown) {
    return refusedCodePage(c, thrown, [401, 422, 429, 500, 503], pending);
  }
}

/**
 * The code page for a refusal whose status is in `shown` (anything else is thrown on): its messages, status
 * (a missing code's 406 shows as 401) and Retry-After. With `pending`, the form stays unless the sign-in is gone
 * (401); without, the page has no form.
 */
function refusedCodePage(
  c: ConsoleReq,
  thrown: unknown,
  shown: number[],
  pending?: PendingCode,
  messages: (err: ApiError) => string[] = errorMessages,
): Response {
  const err = httpErrorOf(thrown);
  if (!(err instanceof ApiError) || !shown.includes(err.status)) throw err;
  return codePage(c, {
    errors: messages(err),
    status: err.status === 406 ? 401 : err.status,
    retryAfter: new Headers(err.headers).get("Retry-After"),
    form: pending !== undefined && err.status !== 401,
    ...(pending ? { sms: smsOffered(c, pending) } : {}),
  });
}
