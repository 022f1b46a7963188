// A user's own settings: API tokens (create with a description, the token shown once; list; revoke) and
// security (an authenticator app enrolled with a QR code and a confirmation code, replaced or removed only with a
// current code of the active one; SMS when configured).

import { renderSVG } from "uqr";
import { ApiError } from "../../lib/errors.ts";
import { deleteTokenOf, tokensOf } from "../registry/services/user_tokens.ts";
import { confirmTotp, enrolTotp, removeTotp } from "../registry/services/twofactor.ts";
import type { UserDoc } from "../registry/core/model.ts";
import { issueToken } from "../registry/services/tokens.ts";
import { type ConsoleReq, errorMessages, maintenance } from "./context.ts";
import { field, signedInForm } from "./forms.ts";
import { dataTable, html, timeTag, trusted } from "./html.ts";
import { buttonForm, csrfField, page, seeOther } from "./layout.ts";

function signedIn(c: ConsoleReq) {
  if (!c.user || !c.session) throw new ApiError(401, "Sign in first.");
  return { user: c.user, session: c.session, key: c.session.userKey };
}

function writable(c: ConsoleReq): void {
  if (c.reg.maintenanceEnabled() && !c.user?.admin) throw maintenance();
}

export function tokensPage(c: ConsoleReq): Response {
  const { session } = signedIn(c);
  const shown = session.shownOnce;
  session.shownOnce = undefined;
  const tokens = tokensOf(c, "own").sort((a, b) => b.created_at.localeCompare(a.created_at));
  const body = html`<h1>API tokens</h1>
  <p>Tokens let Vagrant, Packer and CI use the registry as you: <code>export VAGRANT_CLOUD_TOKEN=…</code> or
  <code>Authorization: Bearer …</code>.</p>
  ${
    shown
      ? html`<section class="panel" aria-labelledby="new-token"><h2 id="new-token">${shown.label}</h2>
    <p>Copy it now: it is shown only once.</p><p class="secret" id="token-value">${shown.value}</p>
    <button type="button" class="secondary" data-copy="token-value" hidden>Copy</button></section>`
      : ""
  }
  <h2>Create a token</h2>
  <form class="stack" method="post" action="/ui/settings/tokens">${csrfField(c)}
  <div><label for="description">Description <span class="hint">(what uses it, e.g. "CI")</span></label>
  <input type="text" id="description" name="description" maxlength="255" required></div>
  <div><button type="submit">Create token</button></div></form>
  <h2>Your tokens</h2>
  ${
    tokens.length === 0 ? html`<p class="muted">No tokens.</p>` : html`
      ${dataTable(
        ["Description", "Created", "Last used", "Expires", "Revoke"],
        tokens.map((t) =>
          html`
            <tr>
              <td>${t.description || html`<span class="muted">(none)</span>`}</td>
              <td>${timeTag(t.created_at)}</td>
              <td>${timeTag(t.last_used_at)}</td>
              <td>${t.expires_at ? timeTag(t.expires_at) : "never"}</td>
              <td>
                ${buttonForm(c, `/ui/settings/tokens/${t.token_hash}/delete`, "Revoke", t.description)}
              </td>
            </tr>
          `
        ),
      )}
    `
  }`;
  return page(c, { title: "API tokens", body });
}

export async function createTokenPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const { user, session } = signedIn(c);
  writable(c);
  const description = field(form, "description");
  if (description.length > 255) {
    return seeOther(c, "/ui/settings/tokens", undefined, {}, [
      "Description is too long (maximum is 255 characters)",
    ]);
  }
  const created = await issueToken(c.reg, user.username, description);
  session.shownOnce = { label: "Your new token", value: created.token };
  return seeOther(c, "/ui/settings/tokens", "Token created.");
}

export async function deleteTokenPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  signedIn(c);
  writable(c);
  await deleteTokenOf(c, "own", c.ctx.params.hash ?? "");
  return seeOther(c, "/ui/settings/tokens", "Token revoked.");
}

/**
 * Setting up (or replacing) the authenticator app: with a second factor active, a current code of it comes
 * with the request (the app's, or one sent by SMS from the button below).
 */
function changeForm(c: ConsoleReq, user: UserDoc, smsActive: boolean) {
  if (!user.totp_secret && !smsActive) {
    return html`<form method="post" action="/ui/settings/security/totp">${csrfField(c)}
      <button type="submit">Set up an authenticator app</button></form>`;
  }
  const label = user.totp_secret
    ? html`
      A current code from the app you use now${smsActive ? " (or one sent by SMS)" : ""} <span
        class="hint">(it keeps working until the new one is confirmed)</span>
    `
    : html`A code sent by SMS to the number ending in ${user.mobile?.slice(-4) ?? ""}`;
  return html`
    <h2>${user.totp_secret ? "Replace the authenticator app" : "Set up an authenticator app"}</h2>
    <form class="stack" method="post" action="/ui/settings/security/totp">${csrfField(c)}
      <div><label for="change-code">${label}</label>
      <input type="text" id="change-code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="8"></div>
      <div><button type="submit">Set up ${user.totp_secret
        ? "a new"
        : "an"} authenticator app</button></div></form>
    ${smsActive
      ? html`<form method="post" action="/ui/settings/security/sms-code">${csrfField(c)}
      <button type="submit" class="secondary">Text me a code</button></form>`
      : ""}
  `;
}

export function securityPage(c: ConsoleReq): Response {
  const { user, session } = signedIn(c);
  const pending = session.shownOnce?.label === "totp" ? session.shownOnce : undefined;
  if (pending && !user.totp_pending) session.shownOnce = undefined;
  const enrolment = pending && user.totp_pending
    ? html`
      <section class="panel" aria-labelledby="enrol">
        <h2 id="enrol">Scan this code</h2>
        <p>Scan it with an authenticator app (or type the key), then enter the 6-digit code the app shows.</p>
        <div class="qr" role="img" aria-label="QR code of the authenticator key">${trusted(
          renderSVG(pending.value),
        )}</div>
        <p>Key: <span class="secret">${pending.extra?.secret ?? ""}</span></p>
        <form class="stack" method="post" action="/ui/settings/security/totp/confirm">${csrfField(c)}
          <div><label for="totp-code">Code from the app</label>
          <input type="text" id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="8"></div>
          <div><button type="submit">${user.totp_secret
            ? "Use the new authenticator app"
            : "Turn on two-factor authentication"}</button></div></form>
      </section>
    `
    : "";
  const smsActive = user.two_factor_enabled && !!user.mobile;
  const body = html`<h1>Security</h1>
  <p>Two-factor authentication is <strong>${user.two_factor_enabled ? "on" : "off"}</strong>.
  ${user.totp_secret ? "An authenticator app is set up." : ""}
  ${user.mobile ? html`SMS codes go to the number ending in ${user.mobile.slice(-4)}.` : ""}</p>
  ${enrolment}
  ${enrolment ? "" : changeForm(c, user, smsActive)}
  ${
    user.totp_secret
      ? html`
        <h2>Remove the authenticator app</h2>
        <form class="stack" method="post" action="/ui/settings/security/totp/remove">${csrfField(c)}
              <div><label for="remove-code">A current code from the app <span class="hint">(proves it is you)</span></label>
              <input type="text" id="remove-code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="8"></div>
              <div><button type="submit" class="danger">Remove the authenticator app</button></div></form>
      `
      : ""
  }
  ${
    c.reg.settings.smsWebhook
      ? html`<p class="hint">SMS codes are delivered to the mobile number an administrator set on your account.</p>`
      : ""
  }`;
  return page(c, { title: "Security", body });
}

/** A refused two-factor change (a missing or wrong current code, too many of them) as the page's error. */
function refusedTotpChange(c: ConsoleReq, err: unknown): Response {
  if (err instanceof ApiError && (err.status === 422 || err.status === 429)) {
    return seeOther(c, "/ui/settings/security", undefined, {}, errorMessages(err));
  }
  throw err;
}

export async function enrolTotpPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const { session } = signedIn(c);
  writable(c);
  let enrolled;
  try {
    // With an app active, a current code of it must come with the session (replacing it is a change of factor).
    enrolled = await enrolTotp(c, { currentCode: field(form, "code") });
  } catch (err) {
    return refusedTotpChange(c, err);
  }
  session.shownOnce = { label: "totp", value: enrolled.otpauth_url, extra: { secret: enrolled.secret } };
  return seeOther(c, "/ui/settings/security");
}

/** Sends a two-factor code by SMS for a change of the second factor (the login's limits on code requests). */
export async function smsCodePost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  const { user, key } = signedIn(c);
  writable(c);
  try {
    await c.reg.twoFactor.requestSmsCode(key, user);
  } catch (err) {
    if (err instanceof ApiError && [422, 429, 500].includes(err.status)) {
      return seeOther(c, "/ui/settings/security", undefined, {}, errorMessages(err));
    }
    throw err;
  }
  return seeOther(
    c,
    "/ui/settings/security",
    `A code was sent to the number ending in ${user.mobile?.slice(-4)}.`,
  );
}

export async function confirmTotpPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const { session } = signedIn(c);
  writable(c);
  try {
    await confirmTotp(c, "own", field(form, "code"));
  } catch (err) {
    return refusedTotpChange(c, err);
  }
  session.shownOnce = undefined;
  // The stored user changed (not its password): the session stays.
  return seeOther(c, "/ui/settings/security", "Two-factor authentication is on.");
}

export async function removeTotpPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  signedIn(c);
  writable(c);
  // A session alone (a borrowed laptop) may not turn the second factor off: a current code must come with it.
  try {
    await removeTotp(c, { currentCode: field(form, "code") });
  } catch (err) {
    return refusedTotpChange(c, err);
  }
  return seeOther(c, "/ui/settings/security", "The authenticator app was removed.");
}
