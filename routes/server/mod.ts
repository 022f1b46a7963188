// The server's own routes: GET /health, answered 200 while the data dir is open; on the scale-out backends it
// also names the node, says which engine is down ("degraded": reads are still served from memory) and how far
// this node's view lags the log table.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { jsonText } from "../../lib/http.ts";
import type { StorageHealth } from "../../lib/store/mod.ts";
import { serverFamily } from "./family.ts";

export function createServerApi(ctx: AppContext): ApiModule {
  // The body is serialized again only when the indexes it reports have moved since the last answer.
  let index = -1;
  let checkpointIndex = -1;
  let body = "";
  return {
    family: serverFamily,
    routes: [{
      method: "GET",
      path: "/health",
      localView: true,
      handler: async () => {
        const storage = await ctx.data.storageHealth();
        if (storage) return scaleOutHealth(ctx, storage);
        const last = ctx.data.log.lastIndex;
        const checkpoint = ctx.data.store.checkpointIndex;
        if (last !== index || checkpoint !== checkpointIndex) {
          index = last;
          checkpointIndex = checkpoint;
          body = JSON.stringify({ status: "ok", index, checkpoint_index: checkpointIndex });
        }
        return jsonText(body);
      },
    }],
  };
}

function scaleOutHealth(ctx: AppContext, storage: StorageHealth): Response {
  const down = storage.database === "down" || storage.object_store === "down";
  return jsonText(JSON.stringify({
    status: down ? "degraded" : "ok",
    node: ctx.config.env.WHARF_NODE_NAME ?? `${Deno.hostname()}:${ctx.config.port}`,
    index: ctx.data.log.lastIndex,
    checkpoint_index: ctx.data.store.checkpointIndex,
    ...storage,
  }));
}
