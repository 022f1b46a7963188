// The web console's route table (server-rendered HTML; JavaScript only enhances): public pages, sign-in,
// settings, organizations, publishing and admin pages. Mounted by app.ts before the registry's root routes.
// Every page runs behind one guard that resolves the session and renders failures as HTML pages.

import type { AppContext } from "../../lib/app.ts";
import { envDurationMs, envInt } from "../../lib/config.ts";
import { ApiError } from "../../lib/errors.ts";
import type { Handler, RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { httpErrorOf } from "../../lib/store_http.ts";
import type { BrowserFront, RegistryCore } from "../registry/mod.ts";
import { registryFamily } from "../registry/core/family.ts";
import { takeOrRefuse } from "../../lib/router/steps/rate_limit.ts";
import { type ConsoleEnv, type ConsoleReq, consoleReq, sessionViewer } from "./context.ts";
import { html } from "./html.ts";
import { page, seeOther } from "./layout.ts";
import { DEFAULT_MAX_SESSIONS_PER_USER, Sessions } from "./session.ts";
import { CodeSteps } from "./code_steps.ts";
import { serveAsset } from "./assets.ts";
import { homePage, namespacePage, searchPage } from "./pages_public.ts";
import { boxPage, versionPage } from "./pages_box.ts";
import { loginGet, loginPost, logoutGet, logoutPost, oidcCompleteGet, oidcStartGet } from "./pages_login.ts";
import { codeGet, codePost } from "./pages_login_code.ts";
import * as settings from "./pages_settings.ts";
import * as orgs from "./pages_orgs.ts";
import * as orgGroups from "./pages_org_groups.ts";
import * as publish from "./pages_publish.ts";
import * as providers from "./pages_providers.ts";
import * as admin from "./pages_admin.ts";
import * as adminIdentity from "./pages_admin_identity.ts";

type ConsoleHandler = (c: ConsoleReq) => Response | Promise<Response>;

const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** A browser asking for a page: HTML accepted, and not JSON (what Vagrant and API clients send). */
export function wantsHtml(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("text/html") && !accept.includes("application/json");
}

const statusTitles: Record<number, string> = {
  400: "Bad request",
  402: "Billing problem",
  403: "Not allowed",
  404: "Page not found",
  413: "Too large",
  415: "Unsupported form",
  422: "That did not work",
  429: "Too many attempts",
  503: "Unavailable, try again later",
};

function errorPage(c: ConsoleReq, err: unknown): Response {
  if (!(err instanceof ApiError)) {
    c.reg.ctx.logger.error("console: unhandled error", {
      request_id: c.ctx.requestId,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    const body = html`
      <h1>Something went wrong</h1>
      <p>The error was logged (request ${c.ctx.requestId}).</p>
    `;
    return page(c, { title: "Error", body, status: 500 });
  }
  if (err.status === 401) {
    const path = c.ctx.request.method === "GET" ? c.ctx.url.pathname + c.ctx.url.search : "/";
    return seeOther(c, `/ui/login?next=${encodeURIComponent(path)}`);
  }
  const title = statusTitles[err.status] ?? "Error";
  const text = err.status === 404
    ? "There is nothing here, or you are not allowed to see it. If it is a private box, sign in first."
    : err.message;
  const body = html`
    <h1>${title}</h1>
    <p>${text}</p>
    <p><a href="/">Back to the start page</a></p>
  `;
  return page(c, { title, body, status: err.status, headers: err.headers ?? {} });
}

function varyOnAccept(response: Response): Response {
  response.headers.append("Vary", "Accept");
  return response;
}

/** Built by the registry with its state (createRegistryApi's front), before the registry declares its routes. */
export function createConsoleApi(ctx: AppContext, registry: RegistryCore): BrowserFront {
  const env = ctx.config.env;
  const sessions = new Sessions(ctx.data.store, ctx.data.keys, {
    idleMs: envDurationMs(env, "WHARF_CONSOLE_SESSION_IDLE", 2 * 3_600_000),
    absoluteMs: envDurationMs(env, "WHARF_CONSOLE_SESSION_MAX", 12 * 3_600_000),
  }, envInt(env, "WHARF_CONSOLE_MAX_SESSIONS_PER_USER", DEFAULT_MAX_SESSIONS_PER_USER, 1));
  const codeSteps = new CodeSteps(ctx.data.store, ctx.data.keys);
  const publicUrl = registry.reg.settings.publicUrl;
  const consoleEnv: ConsoleEnv = {
    reg: registry.reg,
    uploads: registry.uploads,
    sessions,
    codeSteps,
    secureCookies: publicUrl.startsWith("https://"),
  };
  const sweep = setInterval(() => {
    sessions.sweep().catch((err) => ctx.logger.warn("console: session sweep failed", { error: String(err) }));
    codeSteps.sweep().catch((err) =>
      ctx.logger.warn("console: code step sweep failed", { error: String(err) })
    );
  }, 5 * 60_000);
  Deno.unrefTimer(sweep);

  /** `rootPage`: a path under /:user, shared with the registry: only GET/HEAD, and non-browsers get its JSON errors. */
  const guard = (handler: ConsoleHandler, rootPage = false): Handler => async (rc: RequestContext) => {
    if (rootPage) {
      if (rc.request.method !== "GET" && rc.request.method !== "HEAD") {
        throw new ApiError(404, "Resource not found!");
      }
    }
    const c = consoleReq(consoleEnv, rc);
    let response: Response;
    try {
      // Pages count against the registry's rate limit of the client's address, as its API calls do (its 429
      // rendered as a page here, hence not the registry's step; pages catch up first, so are never retried).
      takeOrRefuse(registry.limiter, `ip:${rc.clientIp}`);
      response = await handler(c);
    } catch (thrown) {
      const err = httpErrorOf(thrown);
      if (rootPage && err instanceof ApiError && !wantsHtml(rc.request)) throw err;
      response = errorPage(c, err);
    }
    // What the page left for the next one is stored before the answer goes out: the next request may reach
    // another node.
    if (c.session) {
      await sessions.save(c.session).catch((err) =>
        ctx.logger.warn("console: session not saved", { error: String(err) })
      );
    }
    return response;
  };

  const notFoundPage: ConsoleHandler = () => {
    throw new ApiError(404, "Resource not found!");
  };
  const asset: Handler = (rc) => serveAsset(rc.url.pathname) ?? guard(notFoundPage)(rc);

  const B = "/ui/boxes/:user/:box";
  const V = `${B}/versions/:version`;
  const P = `${V}/providers/:provider/:arch`;
  const table: [string | string[], string, ConsoleHandler][] = [
    [["GET"], "/boxes/search", searchPage],
    [["GET"], "/ui/login", loginGet],
    [["POST"], "/ui/login", loginPost],
    [["GET"], "/ui/login/code", codeGet],
    [["POST"], "/ui/login/code", codePost],
    [["GET"], "/ui/login/oidc/complete", oidcCompleteGet],
    [["GET"], "/ui/login/oidc/:id", oidcStartGet],
    [["GET"], "/ui/logout", logoutGet],
    [["POST"], "/ui/logout", logoutPost],
    [["GET"], "/ui/settings/tokens", settings.tokensPage],
    [["POST"], "/ui/settings/tokens", settings.createTokenPost],
    [["POST"], "/ui/settings/tokens/:hash/delete", settings.deleteTokenPost],
    [["GET"], "/ui/settings/security", settings.securityPage],
    [["POST"], "/ui/settings/security/totp", settings.enrolTotpPost],
    [["POST"], "/ui/settings/security/totp/confirm", settings.confirmTotpPost],
    [["POST"], "/ui/settings/security/totp/remove", settings.removeTotpPost],
    [["POST"], "/ui/settings/security/sms-code", settings.smsCodePost],
    [["GET"], "/ui/orgs/:org", orgs.orgPage],
    [["POST"], "/ui/orgs/:org/members", orgs.addMemberPost],
    [["POST"], "/ui/orgs/:org/members/:member", orgs.setMemberPost],
    [["POST"], "/ui/orgs/:org/members/:member/delete", orgs.removeMemberPost],
    [["POST"], "/ui/orgs/:org/group-bindings", orgGroups.bindGroupPost],
    [["POST"], "/ui/orgs/:org/group-bindings/:group/delete", orgGroups.unbindGroupPost],
    [["POST"], "/ui/orgs/:org/service-principals", orgs.createPrincipalPost],
    [["POST"], "/ui/orgs/:org/service-principals/:client_id/delete", orgs.deletePrincipalPost],
    [["GET"], "/ui/boxes/new", publish.newBoxPage],
    [["POST"], "/ui/boxes/new", publish.createBoxPost],
    [["GET"], `${B}/edit`, publish.editBoxPage],
    [["POST"], `${B}/edit`, publish.editBoxPost],
    [["GET"], `${B}/delete`, publish.deleteBoxConfirm],
    [["POST"], `${B}/delete`, publish.deleteBoxPost],
    [["GET"], `${B}/versions/new`, publish.newVersionPage],
    [["POST"], `${B}/versions/new`, publish.createVersionPost],
    [["POST"], `${V}/edit`, publish.editVersionPost],
    [["POST"], `${V}/release`, publish.releasePost],
    [["GET"], `${V}/revoke`, publish.revokeConfirm],
    [["POST"], `${V}/revoke`, publish.revokePost],
    [["GET"], `${V}/delete`, publish.deleteVersionConfirm],
    [["POST"], `${V}/delete`, publish.deleteVersionPost],
    [["POST"], `${V}/providers`, providers.createProviderPost],
    [["GET"], `${P}/delete`, providers.deleteProviderConfirm],
    [["POST"], `${P}/delete`, providers.deleteProviderPost],
    [["POST"], `${P}/upload`, providers.prepareUploadPost(registry.uploads)],
    [["GET"], "/ui/admin", admin.adminPage],
    [["POST"], "/ui/admin/users", admin.createUserPost],
    [["POST"], "/ui/admin/users/:name/delinquent", admin.userDelinquentPost],
    [["POST"], "/ui/admin/users/:name/reset-2fa", admin.resetTwoFactorPost],
    [["POST"], "/ui/admin/orgs", admin.createOrgPost],
    [["POST"], "/ui/admin/orgs/:name/delinquent", admin.orgDelinquentPost],
    [["POST"], "/ui/admin/maintenance", admin.maintenancePost],
    [["POST"], "/ui/admin/sign-in-methods", admin.signInMethodsPost],
    [["POST"], "/ui/admin/admin-groups", adminIdentity.adminGroupsPost],
    [["GET"], "/ui/admin/users/:name", adminIdentity.adminUserPage],
    [["POST"], "/ui/admin/users/:name/identity", adminIdentity.linkIdentityPost],
    [["POST"], "/ui/admin/users/:name/identity/delete", adminIdentity.unlinkIdentityPost],
  ];
  // Pages catch up with other nodes' commits before they are drawn (a cluster behind a load balancer): a person
  // who just saved a form on one node sees the change on the page the next node draws.
  const pages: Route[] = [
    ...table.map(([method, path, handler]) => ({ method, path, handler: guard(handler) })),
    { method: ALL_METHODS, path: "/ui{/*}?", handler: guard(notFoundPage) },
    { method: ALL_METHODS, path: "/", handler: guard(homePage, true) },
    { method: ALL_METHODS, path: "/:user", handler: guard(namespacePage, true) },
    { method: ALL_METHODS, path: "/:user/boxes/:box", handler: guard(boxPage, true) },
    { method: ALL_METHODS, path: "/:user/boxes/:box/versions/:version", handler: guard(versionPage, true) },
  ];
  const routes: Route[] = [
    { method: ["GET"], path: "/ui/assets/:file", handler: asset, localView: true },
    ...pages.map((page) => ({ ...page, catchUpFirst: true })),
  ];

  return {
    routes,
    // The console's pages share the registry's paths (/:user/…) and answer its failures in the registry's shape.
    family: registryFamily,
    // Downloads and metadata opened from a page carry the session cookie instead of a token.
    browserCaller(rc: RequestContext) {
      const viewer = sessionViewer(consoleEnv, rc);
      return viewer.session ? viewer.caller : undefined;
    },
    metadataRoute(handler: Handler): Handler {
      return (rc) => {
        const method = rc.request.method;
        if ((method === "GET" || method === "HEAD") && wantsHtml(rc.request)) {
          const { username = "", name = "" } = rc.params;
          const location = `/${encodeURIComponent(username)}/boxes/${encodeURIComponent(name)}`;
          return new Response(null, { status: 302, headers: { Location: location, Vary: "Accept" } });
        }
        // The same URL answers JSON or a redirect by Accept: caches must keep them apart.
        const answer = handler(rc);
        return answer instanceof Promise ? answer.then(varyOnAccept) : varyOnAccept(answer);
      };
    },
    close() {
      clearInterval(sweep);
    },
  };
}
