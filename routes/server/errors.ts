// Error shape of the server's own endpoints (/health and the OIDC landing pages): {"error": "..."}.

import type { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";

export function renderServerError(error: ApiError, _requestId: string): Response {
  return json({ error: error.message }, error.status, error.headers);
}
