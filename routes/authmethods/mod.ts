// The auth-method family (Boundary-shaped /v1/auth-methods, scopes, accounts, managed groups, users,
// auth-tokens).

import type { ApiModule, AppContext } from "../../lib/app.ts";
import type { Handler, RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { authFamily } from "./family.ts";
import {
  changePassword,
  createAccount,
  listAccounts,
  readAccount,
  removeAccount,
  setPassword,
  updateAccount,
} from "./principals/accounts.ts";
import { authenticate } from "./login/authenticate.ts";
import { registryIdentity } from "./login/registry_identity.ts";
import type { IdentityProvider } from "../../lib/identity.ts";
import {
  createManagedGroup,
  listManagedGroups,
  readManagedGroup,
  removeManagedGroup,
  updateManagedGroup,
} from "./managed_groups/managed_groups.ts";
import { callbackRoute } from "./login/authenticate_oidc.ts";
import { deleteAuthToken, listAuthTokens, readAuthToken } from "./principals/authtokens.ts";
import { authAdminAnnouncement, bootstrapIfEmpty, type FirstStart } from "./principals/bootstrap.ts";
import { createMethod, listMethods, readMethod, removeMethod } from "./methods/methods.ts";
import { changeState, updateMethod } from "./methods/methods_update.ts";
import { buildAuthUrl, exchangeCode, validateDiscoveredConfig } from "./login/oidc_client.ts";
import { completionPage, errorPage } from "./login/pages.ts";
import { createScope, deleteScope, listScopes, readScope, updateScope } from "./scopes/scopes.ts";
import { AuthService } from "./service.ts";
import { listUsers, readUser, updateUser } from "./principals/users.ts";

const id = ":id([^/:]+)";

/** The family's routes, and the identity provider the registry signs people in through (docs/identity.md). */
export interface AuthMethodsModule extends ApiModule {
  identity: IdentityProvider;
}

export async function createAuthMethodsApi(ctx: AppContext): Promise<AuthMethodsModule> {
  const svc = new AuthService(ctx, { validateDiscoveredConfig, buildAuthUrl, exchangeCode });
  let firstStart: FirstStart | undefined;
  try {
    firstStart = await bootstrapIfEmpty(svc);
    await svc.state.pruneTombstones();
    await svc.callers.sweep();
    // OIDC attempts that expired while the server was down go now (their uncollected tokens with them).
    await svc.oidcAttempts.sweep();
  } catch (err) {
    svc.close();
    throw err;
  }
  const h = (fn: (svc: AuthService, ctx: RequestContext) => Response | Promise<Response>): Handler => (c) =>
    fn(svc, c);
  const routes: Route[] = [
    { method: "GET", path: "/v1/auth-methods", handler: h(listMethods) },
    { method: "POST", path: "/v1/auth-methods", handler: h(createMethod) },
    // GETs that write (the attempt is consumed, a token minted): on a cluster they catch up first, as writes do.
    {
      method: "GET",
      path: "/v1/auth-methods/oidc\\:authenticate\\:callback",
      handler: h(callbackRoute),
      catchUpFirst: true,
    },
    {
      method: "GET",
      path: `/v1/auth-methods/${id}\\:authenticate\\:callback`,
      handler: h(callbackRoute),
      catchUpFirst: true,
    },
    { method: "POST", path: `/v1/auth-methods/${id}\\:authenticate`, handler: h(authenticate) },
    { method: "POST", path: `/v1/auth-methods/${id}\\:change-state`, handler: h(changeState) },
    { method: "GET", path: `/v1/auth-methods/${id}`, handler: h(readMethod) },
    { method: "PATCH", path: `/v1/auth-methods/${id}`, handler: h(updateMethod) },
    { method: "DELETE", path: `/v1/auth-methods/${id}`, handler: h(removeMethod) },
    { method: "GET", path: "/v1/scopes", handler: h(listScopes) },
    { method: "POST", path: "/v1/scopes", handler: h(createScope) },
    { method: "GET", path: `/v1/scopes/${id}`, handler: h(readScope) },
    { method: "PATCH", path: `/v1/scopes/${id}`, handler: h(updateScope) },
    { method: "DELETE", path: `/v1/scopes/${id}`, handler: h(deleteScope) },
    { method: "GET", path: "/v1/accounts", handler: h(listAccounts) },
    { method: "POST", path: "/v1/accounts", handler: h(createAccount) },
    { method: "POST", path: `/v1/accounts/${id}\\:set-password`, handler: h(setPassword) },
    { method: "POST", path: `/v1/accounts/${id}\\:change-password`, handler: h(changePassword) },
    { method: "GET", path: `/v1/accounts/${id}`, handler: h(readAccount) },
    { method: "PATCH", path: `/v1/accounts/${id}`, handler: h(updateAccount) },
    { method: "DELETE", path: `/v1/accounts/${id}`, handler: h(removeAccount) },
    { method: "GET", path: "/v1/managed-groups", handler: h(listManagedGroups) },
    { method: "POST", path: "/v1/managed-groups", handler: h(createManagedGroup) },
    { method: "GET", path: `/v1/managed-groups/${id}`, handler: h(readManagedGroup) },
    { method: "PATCH", path: `/v1/managed-groups/${id}`, handler: h(updateManagedGroup) },
    { method: "DELETE", path: `/v1/managed-groups/${id}`, handler: h(removeManagedGroup) },
    { method: "GET", path: "/v1/users", handler: h(listUsers) },
    { method: "GET", path: `/v1/users/${id}`, handler: h(readUser) },
    { method: "PATCH", path: `/v1/users/${id}`, handler: h(updateUser) },
    { method: "GET", path: "/v1/auth-tokens", handler: h(listAuthTokens) },
    { method: "GET", path: `/v1/auth-tokens/${id}`, handler: h(readAuthToken) },
    { method: "DELETE", path: `/v1/auth-tokens/${id}`, handler: h(deleteAuthToken) },
    { method: "GET", path: "/authentication-complete", handler: () => completionPage() },
    { method: "GET", path: "/authentication-error", handler: (c) => errorPage(c.url) },
  ];
  return {
    routes,
    family: authFamily,
    identity: registryIdentity(svc, () => {
      // Handed over once: the registry announces it with its admin, or as the auth methods' own line.
      const taken = firstStart;
      firstStart = undefined;
      return taken && {
        methodId: taken.methodId,
        generatedPassword: taken.generatedPassword,
        announcement: taken.generatedPassword &&
          authAdminAnnouncement(taken.methodId, taken.generatedPassword),
      };
    }),
    close: async () => {
      // What the current window of failed logins counted is written while the store is still open.
      await svc.failureEvents.close().catch(() => {});
      svc.close();
    },
  };
}
