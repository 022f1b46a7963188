// The server's own routes: GET /health, answered 200 while the data dir is open.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { json } from "../../lib/http.ts";

export function createServerApi(ctx: AppContext): ApiModule {
  return {
    routes: [{
      method: "GET",
      path: "/health",
      handler: () =>
        json({
          status: "ok",
          index: ctx.data.log.lastIndex,
          checkpoint_index: ctx.data.store.checkpointIndex,
        }),
    }],
  };
}
