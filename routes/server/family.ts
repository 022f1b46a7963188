// The server's own API family as the router knows it: its error renderer and the paths it owns.

import type { ApiFamily } from "../../lib/router.ts";
import { renderServerError } from "./errors.ts";

/** /health, and the OIDC landing pages the auth methods serve (routes/authmethods/mod.ts). */
export const serverFamily: ApiFamily = {
  name: "server",
  render: renderServerError,
  owns: { paths: ["/health", "/authentication-complete", "/authentication-error"] },
};
