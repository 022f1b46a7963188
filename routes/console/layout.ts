// The page shell (header, navigation, main landmark, footer) and the console's response headers: a CSP with no
// inline script and frame-ancestors 'none', nosniff, no referrer to other sites, no caching of signed-in pages.

import { type Html, html } from "./html.ts";
import { assets } from "./assets.ts";
import type { ConsoleReq } from "./context.ts";

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export function securityHeaders(c: ConsoleReq | undefined, extra: HeadersInit = {}): Headers {
  const h = new Headers(extra);
  h.set("Content-Security-Policy", CSP);
  h.set("X-Content-Type-Options", "nosniff");
  h.set("X-Frame-Options", "DENY");
  h.set("Referrer-Policy", "same-origin");
  if (!h.has("Cache-Control")) h.set("Cache-Control", c?.session ? "private, no-store" : "no-cache");
  h.set("Vary", "Cookie");
  return h;
}

export interface PageOptions {
  title: string;
  body: Html;
  status?: number;
  headers?: HeadersInit;
  /** Messages shown above the page (errors of a form post). */
  errors?: string[];
}

/** The CSRF field of the viewer's session, for every form. */
export function csrfField(c: ConsoleReq): Html {
  return c.session ? html`<input type="hidden" name="_csrf" value="${c.session.csrf}">` : html``;
}

/** A one-button form posting to `action`: `label`, and `what` it acts on for screen readers. */
export function buttonForm(c: ConsoleReq, action: string, label: string, what: string): Html {
  return html`<form class="inline" method="post" action="${action}">${csrfField(c)}
    <button type="submit" class="danger">${label}<span class="skip"> ${what}</span></button></form>`;
}

function nav(c: ConsoleReq): Html {
  const user = c.user;
  if (!user) {
    return html`
      <li><a href="/boxes/search">Search boxes</a></li>
      <li><a href="/ui/login">Sign in</a></li>
    `;
  }
  return html`
    <li><a href="/boxes/search">Search boxes</a></li>
        <li><a href="/${encodeURIComponent(user.username)}">My boxes</a></li>
        <li><a href="/ui/boxes/new">New box</a></li>
        <li><a href="/ui/settings/tokens">Tokens</a></li>
        <li><a href="/ui/settings/security">Security</a></li>
        ${user.admin ? html`<li><a href="/ui/admin">Admin</a></li>` : ""}
        <li>
      <form method="post"
        action="/ui/logout">${csrfField(c)}<button type="submit">Sign out ${user.username}</button></form>
    </li>
  `;
}

export function page(c: ConsoleReq, options: PageOptions): Response {
  const flash = c.session?.flash;
  const errors = [...(c.session?.flashErrors ?? []), ...(options.errors ?? [])];
  if (c.session) c.session.flash = c.session.flashErrors = undefined;
  const maintenance = c.reg.maintenanceEnabled();
  const body = html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${options.title} · wharf</title>
        <link rel="stylesheet" href="${assets.css.path}">
        <link rel="icon" href="${assets.icon.path}" type="image/svg+xml">
        <script src="${assets.js.path}" defer></script>
      </head>
      <body>
    <a class="skip" href="#main">Skip to content</a>
    <header class="site"><div class="bar">
    <a class="brand" href="/">wharf</a>
    <nav aria-label="Main"><ul>${nav(c)}</ul></nav>
    </div></header>
    ${maintenance
      ? html`<p class="banner" role="status">wharf is in maintenance mode: only administrators can make changes.</p>`
      : ""}
    <main id="main">
    ${flash ? html`<p class="notice" role="status">${flash}</p>` : ""}
    ${errors.length
      ? html`<div class="errors" role="alert"><strong>That did not work:</strong><ul>${
        errors.map((e) => html`<li>${e}</li>`)
      }</ul></div>`
      : ""}
    ${options.body}
    </main>
    <footer class="site"><p>wharf — a Vagrant box registry. <a href="/boxes/search">Browse all boxes</a>.</p></footer>
      </body>
    </html>
  `;
  const headers = securityHeaders(c, options.headers);
  headers.set("Content-Type", "text/html; charset=utf-8");
  return new Response(body.value, { status: options.status ?? 200, headers });
}

/** 303 See Other after a form post (Post/Redirect/Get), with an optional message for the next page. */
export function seeOther(
  c: ConsoleReq,
  location: string,
  flash?: string,
  headers: HeadersInit = {},
  errors?: string[],
): Response {
  if (flash && c.session) c.session.flash = flash;
  if (errors && c.session) c.session.flashErrors = errors;
  const h = securityHeaders(c, headers);
  h.set("Location", location);
  return new Response(null, { status: 303, headers: h });
}
