// The Nomad-shaped API family as the router knows it: its error renderer and the paths it owns.

import type { ApiFamily } from "../../lib/router.ts";
import { renderEventsError } from "./errors.ts";

/** All of /v1 but the auth methods' collections (routes/authmethods/family.ts). */
export const eventsFamily: ApiFamily = {
  name: "events",
  render: renderEventsError,
  owns: { paths: ["/v1"], prefixes: ["/v1/"] },
};
