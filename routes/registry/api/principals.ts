// Service principal routes (docs/registry.md#service-principals-for-ci):
// /api/v1/admin/organizations/:name/service-principals, over services/principals.ts.

import { json } from "../../../lib/http.ts";
import * as principals from "../services/principals.ts";
import type { Req } from "./auth.ts";
import { readPayload } from "./body.ts";

/** POST …/service-principals → 201 with the secret, shown this once. */
export async function createPrincipal(req: Req): Promise<Response> {
  const body = await readPayload(req, "service_principal");
  const created = await principals.createPrincipal(req, req.ctx.params.name ?? "", body);
  return json(created, 201, { "Cache-Control": "no-store" });
}

/** GET …/service-principals: the organization's principals, oldest first, without secrets. */
export function listPrincipals(req: Req): Response {
  return json({ service_principals: principals.listPrincipals(req, req.ctx.params.name ?? "") });
}

/** DELETE …/service-principals/:client_id → 204. */
export async function deletePrincipal(req: Req): Promise<Response> {
  await principals.deletePrincipal(req, req.ctx.params.name ?? "", req.ctx.params.client_id ?? "");
  return new Response(null, { status: 204 });
}
