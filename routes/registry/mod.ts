// The box registry (Vagrant Cloud API v1) route table.

import type { ApiModule, AppContext } from "../../lib/app.ts";

export function createRegistryApi(_ctx: AppContext): ApiModule {
  return { routes: [] };
}
