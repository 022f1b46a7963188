// The auth-method family (Boundary-shaped /v1/auth-methods, scopes, accounts, users, auth-tokens).

import type { ApiModule, AppContext } from "../../lib/app.ts";

export function createAuthMethodsApi(_ctx: AppContext): ApiModule {
  return { routes: [] };
}
