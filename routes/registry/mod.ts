// The box registry (Vagrant Cloud API v1) route table. Every route runs behind the registry's own steps
// (api/steps.ts) in spec order: caller → maintenance 503 → rate limit 429 → route 404/405 → the handler.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import type { IdentityProvider } from "../../lib/identity.ts";
import { ApiError } from "../../lib/errors.ts";
import { baseUrl, type Handler, type RequestContext } from "../../lib/http.ts";
import type { Req } from "./api/auth.ts";
import type { Caller } from "./core/caller.ts";
import { notFound } from "./core/errors.ts";
import { registryFamily } from "./core/family.ts";
import { loadRegistrySettings } from "./core/settings.ts";
import { Registry } from "./core/registry.ts";
import { RateLimiter } from "../../lib/rate_limiter.ts";
import { outboxSender, webhookSender } from "./core/sms.ts";
import { bootstrapAdmin } from "./services/bootstrap.ts";
import { removeGroupBindings } from "./services/group_bindings.ts";
import { createToken, deleteToken, requestCode, validateToken } from "./api/tokens.ts";
import { callerOf, type RegistryRoute, registrySteps } from "./api/steps.ts";
import * as adminUsers from "./api/admin_users.ts";
import * as adminOrgs from "./api/admin_orgs.ts";
import * as adminIdentity from "./api/admin_identity.ts";
import { getNamespace } from "./api/users.ts";
import { search } from "./api/search.ts";
import { createBox, deleteBox, getBox, updateBox } from "./api/boxes.ts";
import {
  createVersion,
  deleteVersion,
  getVersion,
  releaseVersion,
  revokeVersion,
  updateVersion,
} from "./api/versions.ts";
import { createProvider, deleteProvider, getProvider, updateProvider } from "./api/providers.ts";
import { prepareUpload, receiveUpload, uploadCallback } from "./api/uploads.ts";
import { Uploads } from "./services/uploads.ts";
import { boxMetadata, downloadProvider } from "./api/downloads.ts";
import * as principals from "./api/principals.ts";
import { OAUTH_TOKEN_PATH, oauthToken, withOAuthErrors } from "./api/oauth2.ts";
import { apiOfPath, underApiV2 } from "./api/api_v2.ts";
import { getHistory, putHistory } from "./api/box_history.ts";

type RegistryHandler = (req: Req) => Response | Promise<Response>;

/**
 * Root routes accept every method so that other families' unknown paths (`/v1/x`) are not answered
 * with a registry 405; registry paths with another method get 405 here.
 */
function rootOnly(handler: RegistryHandler): RegistryHandler {
  return (req) => {
    const method = req.ctx.request.method;
    if (method === "GET") return handler(req);
    if (method !== "HEAD") {
      throw new ApiError(405, "Method not allowed", { headers: { Allow: "GET, HEAD" } });
    }
    // These routes declare HEAD themselves, so the router does not drop the body for them.
    const answer = handler(req);
    return answer instanceof Promise ? answer.then(bodiless) : bodiless(answer);
  };
}

function bodiless(response: Response): Response {
  response.body?.cancel().catch(() => {});
  return new Response(null, { status: response.status, headers: response.headers });
}

interface RouteSpec {
  method: string | string[];
  path: string;
  handler: RegistryHandler;
  /** POST /authenticate: admins may log in during maintenance (checked after the password). */
  login?: boolean;
  secretParams?: string[];
  maxBodyBytes?: number;
  /** A GET that writes: on a cluster it catches up with other nodes first, as writes do (lib/router.ts). */
  catchUpFirst?: boolean;
  /** Around the registry's steps and the handler (a front's page, RFC 6749 errors): api/steps.ts RegistryRules. */
  wrap?: (handler: Handler) => Handler;
}

/** An admin collection's routes, in this order: list and create at `base`, read, update and delete at `base/:name`. */
function adminCollection(
  base: string,
  handlers: Record<"list" | "create" | "read" | "update" | "remove", RegistryHandler>,
): RouteSpec[] {
  return [
    { method: "GET", path: base, handler: handlers.list },
    { method: "POST", path: base, handler: handlers.create },
    { method: "GET", path: `${base}/:name`, handler: handlers.read },
    { method: "PUT", path: `${base}/:name`, handler: handlers.update },
    { method: "DELETE", path: `${base}/:name`, handler: handlers.remove },
  ];
}

const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const B = "/api/v1/box/:username/:name";
const V = `${B}/version/:version`;
const P = `${V}/provider/:provider`;
const ROOT_USER = ":username";
const SP = "/api/v1/admin/organizations/:name/service-principals";
const GB = "/api/v2/organization/:org/group-bindings";
const IDENTITY = "/api/v2/admin/users/:username/identity";

/** The registry's state, for a front built on it (the web console calls the same services). */
export interface RegistryCore {
  reg: Registry;
  uploads: Uploads;
  /** The registry's request rate limit (per token or client IP), which web console pages share. */
  limiter: RateLimiter;
}

/** A browser front over the registry (the web console), built with the registry's state before its routes. */
export interface BrowserFront extends ApiModule {
  /** The signed-in user of a request without a token, for metadata and downloads followed from a page. */
  browserCaller(ctx: RequestContext): Caller | undefined;
  /** Wraps the /:user/:box metadata route: a browser asking for HTML is sent to the box page. */
  metadataRoute(handler: Handler): Handler;
}

/** The registry's routes and state, and the front built on it when one was asked for. */
export interface RegistryModule<F extends BrowserFront | undefined> extends ApiModule, RegistryCore {
  front: F;
}

export async function createRegistryApi<F extends BrowserFront | undefined = undefined>(
  ctx: AppContext,
  buildFront?: (core: RegistryCore) => F,
  identity?: IdentityProvider,
): Promise<RegistryModule<F>> {
  const settings = loadRegistrySettings(ctx.config);
  const reg = new Registry(ctx, settings, {
    downloads: await ctx.data.counters("registry-downloads"),
    tokenUse: await ctx.data.counters("registry-token-last-used"),
    principalUse: await ctx.data.counters("registry-sp-last-used"),
    sms: settings.smsWebhook
      ? webhookSender(settings.smsWebhook, settings.smsWebhookToken, ctx.logger)
      : outboxSender(ctx.config.dataDir, ctx.logger),
    identity,
  });
  await bootstrapAdmin(reg);
  // A deleted managed group takes its bindings with it (docs/identity.md#group-bindings).
  const unwatchGroups = identity?.watchManagedGroupRemovals((id) => {
    removeGroupBindings(reg, id).catch((err) =>
      ctx.logger.error("removing a deleted managed group's bindings failed", { id, error: String(err) })
    );
  });
  const uploads = new Uploads(reg);
  const limiter = new RateLimiter(settings.rateLimitRps, settings.rateLimitBurst);
  const refusals = ctx.metrics.counterValue(
    "wharf_registry_rate_limited_total",
    "Registry API requests answered 429 by the per-client rate limit (WHARF_RATE_LIMIT_RPS, WHARF_RATE_LIMIT_BURST).",
  );
  ctx.metrics.onScrape(() => refusals.set(limiter.refusals));
  // Blobs that lose their last reference are collected right after the write; a full scan of the blob folder
  // (what a crash or an older version left) runs at start and every 10 minutes.
  let orphanTicks = 0;
  const orphanTimer = setInterval(
    () => reg.scheduleOrphanCollection({ fullScan: ++orphanTicks % 10 === 0 }),
    60_000,
  );
  Deno.unrefTimer(orphanTimer);
  reg.scheduleOrphanCollection({ fullScan: true });
  const front = buildFront?.({ reg, uploads, limiter }) as F;
  const browserCaller = front ? (rc: RequestContext) => front.browserCaller(rc) : undefined;

  const specs: RouteSpec[] = [
    { method: "POST", path: "/api/v1/authenticate", handler: createToken, login: true },
    { method: "GET", path: "/api/v1/authenticate", handler: validateToken },
    { method: "DELETE", path: "/api/v1/authenticate", handler: deleteToken },
    { method: "POST", path: "/api/v1/two-factor/request-code", handler: requestCode },
    { method: "GET", path: "/api/v1/user/:username", handler: getNamespace },
    { method: "GET", path: "/api/v1/search", handler: search },
    { method: "POST", path: "/api/v1/boxes", handler: createBox },
    { method: "GET", path: B, handler: getBox },
    { method: "PUT", path: B, handler: updateBox },
    { method: "DELETE", path: B, handler: deleteBox },
    { method: "POST", path: `${B}/versions`, handler: createVersion },
    { method: "GET", path: V, handler: getVersion },
    { method: "PUT", path: V, handler: updateVersion },
    { method: "DELETE", path: V, handler: deleteVersion },
    { method: "PUT", path: `${V}/release`, handler: releaseVersion },
    { method: "PUT", path: `${V}/revoke`, handler: revokeVersion },
    { method: "POST", path: `${V}/providers`, handler: createProvider },
    { method: "GET", path: P, handler: getProvider },
    { method: "PUT", path: P, handler: updateProvider },
    { method: "DELETE", path: P, handler: deleteProvider },
    // GETs that write (an upload session).
    { method: "GET", path: `${P}/upload`, handler: prepareUpload(uploads, "standard"), catchUpFirst: true },
    {
      method: "GET",
      path: `${P}/upload/direct`,
      handler: prepareUpload(uploads, "direct"),
      catchUpFirst: true,
    },
    { method: "PUT", path: `${P}/upload/direct/:id`, handler: uploadCallback(uploads), secretParams: ["id"] },
    {
      method: "PUT",
      path: "/api/v1/uploads/:id",
      handler: receiveUpload(uploads),
      secretParams: ["id"],
      maxBodyBytes: settings.maxUploadBytes,
    },
    ...adminCollection("/api/v1/admin/users", {
      list: adminUsers.listUsers,
      create: adminUsers.createUser,
      read: adminUsers.getUser,
      update: adminUsers.updateUser,
      remove: adminUsers.deleteUser,
    }),
    { method: "POST", path: "/api/v1/admin/users/:name/totp", handler: adminUsers.enrolTotp },
    { method: "DELETE", path: "/api/v1/admin/users/:name/totp", handler: adminUsers.removeTotp },
    { method: "POST", path: "/api/v1/admin/users/:name/totp/confirm", handler: adminUsers.confirmTotp },
    { method: "GET", path: "/api/v1/admin/users/:name/tokens", handler: adminUsers.listUserTokens },
    {
      method: "DELETE",
      path: "/api/v1/admin/users/:name/tokens/:token_hash",
      handler: adminUsers.deleteUserToken,
    },
    ...adminCollection("/api/v1/admin/organizations", {
      list: adminOrgs.listOrgs,
      create: adminOrgs.createOrg,
      read: adminOrgs.getOrg,
      update: adminOrgs.updateOrg,
      remove: adminOrgs.deleteOrg,
    }),
    {
      method: "PUT",
      path: "/api/v1/admin/organizations/:name/members/:username",
      handler: adminOrgs.putMember,
    },
    {
      method: "DELETE",
      path: "/api/v1/admin/organizations/:name/members/:username",
      handler: adminOrgs.deleteMember,
    },
    { method: "GET", path: "/api/v1/admin/maintenance", handler: adminOrgs.getMaintenance },
    { method: "PUT", path: "/api/v1/admin/maintenance", handler: adminOrgs.putMaintenance },
    { method: "GET", path: "/api/v2/admin/sign-in-methods", handler: adminIdentity.getSignInMethods },
    { method: "PUT", path: "/api/v2/admin/sign-in-methods", handler: adminIdentity.putSignInMethods },
    { method: "GET", path: IDENTITY, handler: adminIdentity.getIdentity },
    { method: "PUT", path: IDENTITY, handler: adminIdentity.putIdentity },
    { method: "DELETE", path: IDENTITY, handler: adminIdentity.deleteIdentity },
    { method: "GET", path: "/api/v2/admin/group-bindings", handler: adminIdentity.getAdminGroups },
    { method: "PUT", path: "/api/v2/admin/group-bindings", handler: adminIdentity.putAdminGroups },
    { method: "GET", path: GB, handler: adminIdentity.listGroupBindings },
    { method: "GET", path: "/api/v2/organization/:org/members", handler: adminIdentity.listMembers },
    { method: "POST", path: GB, handler: adminIdentity.createGroupBinding },
    { method: "DELETE", path: `${GB}/:managed_group_id`, handler: adminIdentity.deleteGroupBinding },
    { method: "GET", path: "/api/v1/admin/boxes/:username/:name/history", handler: getHistory },
    { method: "PUT", path: "/api/v1/admin/boxes/:username/:name/history", handler: putHistory },
    { method: "GET", path: SP, handler: principals.listPrincipals },
    { method: "POST", path: SP, handler: principals.createPrincipal },
    { method: "DELETE", path: `${SP}/:client_id`, handler: principals.deletePrincipal },
    // Every method: the endpoint answers 405 itself, in RFC 6749 JSON, and reads at most 16 KiB of body; every
    // failure (maintenance, rate limit, its own) is RFC 6749 JSON.
    {
      method: ALL_METHODS,
      path: OAUTH_TOKEN_PATH,
      handler: oauthToken,
      maxBodyBytes: Number.MAX_SAFE_INTEGER,
      wrap: withOAuthErrors,
    },
    // What Vagrant 2.4 reads first: one entry per (provider, architecture) (docs/registry.md#vagrant-24).
    { method: "GET", path: "/api/v2/vagrant/:username/:name", handler: boxMetadata },
    {
      method: ALL_METHODS,
      path: `/${ROOT_USER}/:name`,
      handler: rootOnly(boxMetadata),
      ...(front ? { wrap: (h: Handler) => front.metadataRoute(h) } : {}),
    },
    {
      method: ALL_METHODS,
      path: `/${ROOT_USER}/boxes/:name/versions/:version/providers/:provider([^/]+)\\.box`,
      handler: rootOnly(downloadProvider),
    },
    {
      method: ALL_METHODS,
      path: `/${ROOT_USER}/boxes/:name/versions/:version/providers/:provider/:architecture/vagrant.box`,
      handler: rootOnly(downloadProvider),
    },
  ];
  // Every /api/v1 route is served under /api/v2 too, placed before the root routes.
  specs.splice(specs.findIndex((s) => s.path.startsWith(`/${ROOT_USER}/`)), 0, ...underApiV2(specs));
  const patterns = specs.map((s) => ({
    pattern: new URLPattern({ pathname: s.path }),
    methods: typeof s.method === "string" ? [s.method] : s.method,
  }));

  /**
   * The handler of a route, behind the registry's steps (api/steps.ts: X-Request-Id, the caller, maintenance, rate
   * limit). Synchronous when the handler is: the router then answers without a Promise.
   */
  const answer = (handler: RegistryHandler, checkParams = true, api: 1 | 2 = 1): Handler => (ctx) => {
    if (checkParams) {
      const params = ctx.params;
      for (const k in params) {
        const v = params[k]!;
        if (v === "" || v.includes("/")) throw notFound();
      }
    }
    const origin = baseUrl(ctx, settings.publicUrl, settings.trustProxy);
    return handler({ ctx, reg, caller: callerOf(ctx), origin, api });
  };

  /** Unknown /api/v1 paths and methods: 405 with Allow when the path exists, else 404. */
  const unmatched: RegistryHandler = (req) => {
    const path = req.ctx.url.pathname.replace(/\/{2,}/g, "/");
    const allowed = new Set<string>();
    for (const p of patterns) {
      if (p.pattern.test({ pathname: path })) p.methods.forEach((m) => allowed.add(m));
    }
    if (allowed.has("GET")) allowed.add("HEAD");
    if (allowed.size) {
      throw new ApiError(405, "Method not allowed", { headers: { Allow: [...allowed].join(", ") } });
    }
    throw notFound();
  };

  const routes: RegistryRoute[] = specs.map((s) => ({
    method: s.method,
    path: s.path,
    handler: answer(s.handler, true, apiOfPath(s.path)),
    registry: {
      ...(s.login ? { login: true } : {}),
      ...(s.path.startsWith(`/${ROOT_USER}/`) ? { rootPath: true } : {}),
      ...(s.wrap ? { wrap: s.wrap } : {}),
    },
    ...(s.secretParams ? { secretParams: s.secretParams } : {}),
    ...(s.maxBodyBytes ? { maxBodyBytes: s.maxBodyBytes } : {}),
    ...(s.catchUpFirst ? { catchUpFirst: true } : {}),
  }));
  for (const api of ["/api/v1", "/api/v2"]) {
    routes.push({
      method: ALL_METHODS,
      path: `${api}{/*}?`,
      handler: answer(unmatched, false),
      registry: {},
    });
  }

  return {
    routes,
    family: registryFamily,
    steps: registrySteps(reg, limiter, browserCaller),
    reg,
    uploads,
    limiter,
    front,
    async close() {
      clearInterval(orphanTimer);
      unwatchGroups?.();
      await uploads.close();
      reg.close();
      await reg.settle();
    },
  };
}
