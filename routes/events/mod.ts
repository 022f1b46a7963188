// The Nomad-shaped family (/v1/...): agent health now; the event stream, ACL API and producers build on it.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { json } from "../../lib/http.ts";

export function createEventsApi(_ctx: AppContext): ApiModule {
  return {
    routes: [{
      method: "GET",
      path: "/v1/agent/health",
      handler: () => json({ server: { ok: true, message: "ok" } }),
    }],
  };
}
