// The auth methods' API family as the router knows it: its error renderer and the paths it owns.

import type { ApiFamily } from "../../lib/router.ts";
import { renderAuthError } from "./errors.ts";

/** The collections the auth methods serve under /v1 (the rest of /v1 is the event stream's). */
const collections = ["auth-methods", "scopes", "accounts", "managed-groups", "users", "auth-tokens"];

/** Its collections and their custom verbs (`/v1/auth-methods:list`). */
export const authFamily: ApiFamily = {
  name: "auth",
  render: renderAuthError,
  owns: {
    paths: collections.map((c) => `/v1/${c}`),
    prefixes: collections.flatMap((c) => [`/v1/${c}/`, `/v1/${c}:`]),
  },
};
