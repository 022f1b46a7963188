// The registry's API family as the router knows it: its error renderer and the paths it owns.

import type { ApiFamily } from "../../../lib/router.ts";
import { renderRegistryError } from "./errors.ts";

/**
 * Every path no other family claims — /api/v1, /api/v2 and the root paths it shares with the web console
 * (/:user/:box) — answers its failures in the registry's shape.
 */
export const registryFamily: ApiFamily = {
  name: "registry",
  render: renderRegistryError,
  owns: { prefixes: ["/"] },
};
