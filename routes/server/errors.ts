// Error shape of the server's own endpoints (/health and the OIDC landing pages): {"error": "..."}.

import type { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import type { ApiFamily } from "../../lib/router.ts";

/** The server's own paths: /health, and the OIDC landing pages the auth methods serve (routes/authmethods). */
export const serverFamily: ApiFamily = {
  name: "server",
  render: renderServerError,
  owns: { paths: ["/health", "/authentication-complete", "/authentication-error"] },
};

export function renderServerError(error: ApiError, _requestId: string): Response {
  return json({ error: error.message }, error.status, error.headers);
}
