// The v2 route table derived from v1 (docs/registry.md#how-vagrant-23-and-24-see-the-same-box): every /api/v1
// route is served under /api/v2 too, with provider paths gaining `/:architecture`; handlers learn which API
// they serve from `Req.api`.

import type { ApiVersion } from "../core/render.ts";

/** The API a route path belongs to: /api/v2 routes are v2, everything else (v1, root routes) v1. */
export function apiOfPath(path: string): ApiVersion {
  return path.startsWith("/api/v2/") ? 2 : 1;
}

/** `/api/v1/…/provider/:provider…` → `/api/v2/…/provider/:provider/:architecture…`. */
export function v2Path(v1: string): string {
  return v1.replace(/^\/api\/v1\//, "/api/v2/").replace(
    /\/provider\/:provider(?=\/|$)/,
    "/provider/:provider/:architecture",
  );
}

/** The same routes under /api/v2, in the same order (their bodies, answers and errors are v1's unless the handler asks `req.api`). */
export function underApiV2<T extends { path: string }>(routes: readonly T[]): T[] {
  return routes.filter((r) => r.path.startsWith("/api/v1/")).map((r) => ({ ...r, path: v2Path(r.path) }));
}
