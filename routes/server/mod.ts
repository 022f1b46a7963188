// The server's own routes: GET /health, answered 200 while the data dir is open.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { jsonText } from "../../lib/http.ts";

export function createServerApi(ctx: AppContext): ApiModule {
  // The body is serialized again only when the indexes it reports have moved since the last answer.
  let index = -1;
  let checkpointIndex = -1;
  let body = "";
  return {
    routes: [{
      method: "GET",
      path: "/health",
      handler: () => {
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
