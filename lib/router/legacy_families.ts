// The families of a router built from renderers by family name (RouterOptions `renderers`), owning the paths the
// modules in routes/ declare for themselves: for tables built without modules (tests, benches).

import type { Family } from "../http.ts";
import type { ApiFamily, ErrorRenderer } from "./families.ts";

/** The auth methods' collections (routes/authmethods/family.ts declares the same). */
const authCollections = ["auth-methods", "scopes", "accounts", "users", "auth-tokens"];

export function familiesOf(renderers: Record<Family, ErrorRenderer>): ApiFamily[] {
  return [
    { name: "registry", render: renderers.registry, owns: { prefixes: ["/"] } },
    {
      name: "auth",
      render: renderers.auth,
      owns: {
        paths: authCollections.map((c) => `/v1/${c}`),
        prefixes: authCollections.flatMap((c) => [`/v1/${c}/`, `/v1/${c}:`]),
      },
    },
    { name: "events", render: renderers.events, owns: { paths: ["/v1"], prefixes: ["/v1/"] } },
    {
      name: "server",
      render: renderers.server,
      owns: { paths: ["/health", "/authentication-complete", "/authentication-error"] },
    },
  ];
}
