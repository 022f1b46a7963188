// The API families the server's modules declare (routes/*/family.ts), for router tables built in tests and
// benches: a group of bare routes beside them renders its failures in the shape of the family owning the path.

import type { Route, RouteGroup } from "../../lib/router.ts";
import { authFamily } from "../../routes/authmethods/family.ts";
import { eventsFamily } from "../../routes/events/family.ts";
import { registryFamily } from "../../routes/registry/core/family.ts";
import { serverFamily } from "../../routes/server/family.ts";

/** `routes` (in one group without a family, so tried for every path) and every family, without routes. */
export function withServerFamilies(routes: readonly Route[]): RouteGroup[] {
  return [
    ...[registryFamily, authFamily, eventsFamily, serverFamily].map((family) => ({ family, routes: [] })),
    { routes },
  ];
}
