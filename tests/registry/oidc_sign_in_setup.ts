// The registry offering an active OIDC auth method ("Corp SSO") for sign-in beside its own password and the
// global primary method, for the tests of OIDC sign-in (docs/identity.md#oidc-sign-in).

import { assertEquals } from "../helpers/assert.ts";
import type { OidcProviderFixture } from "../fixtures/oidc_provider.ts";
import { type Client as AuthClient, createActiveOidcMethod, signInAdmin } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";

export interface OidcSignInSetup {
  /** The registry API client and its admin's token. */
  api: Client;
  admin: string;
  /** The auth methods' first admin (fastEnv's password) and the global primary method. */
  authAdmin: AuthClient;
  primary: string;
  /** The OIDC method's id. */
  oidc: string;
}

/** Creates "Corp SSO" against `op` with `claimsScopes` and offers registry, primary and it for sign-in. */
export async function offerOidcSignIn(
  url: string,
  op: OidcProviderFixture,
  claimsScopes: string[],
): Promise<OidcSignInSetup> {
  const api = new Client(url);
  const admin = await api.login("admin", ADMIN_PASSWORD);
  const { admin: authAdmin, primaryMethodId: primary } = await signInAdmin(url);
  const oidc = await createActiveOidcMethod(authAdmin, op, url, {
    name: "Corp SSO",
    attributes: { claims_scopes: claimsScopes },
  });
  const put = await api.put("/api/v2/admin/sign-in-methods", { methods: ["registry", primary, oidc] }, {
    token: admin,
  });
  assertEquals(put.status, 200, put.text);
  return { api, admin, authAdmin, primary, oidc };
}
