// Admin API for organizations and their members (docs/registry.md#users-and-organizations-admin-api), and the
// maintenance toggle.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { existingOrg, requireAdmin } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { deleteNamespace, renderOrg } from "../services/accounts.ts";
import * as orgs from "../services/orgs.ts";
import * as maintenance from "../services/maintenance.ts";

export function getOrg(req: Req): Response {
  requireAdmin(req);
  return json(renderOrg(existingOrg(req.reg, req.ctx.params.name ?? "").doc));
}

export async function deleteOrg(req: Req): Promise<Response> {
  const cascade = req.ctx.url.searchParams.get("cascade") === "true";
  return json(
    renderOrg(await deleteNamespace(req, orgs.orgRemoval(req.reg, req.ctx.params.name ?? ""), cascade)),
  );
}

/** Admins, or owners of the organization, manage its members (and its service principals). */

export async function putMember(req: Req): Promise<Response> {
  const body = await readPayload(req, "member");
  const { name = "", username = "" } = req.ctx.params;
  return json(renderOrg(await orgs.putMember(req, name, username, body)));
}

export async function deleteMember(req: Req): Promise<Response> {
  const { name = "", username = "" } = req.ctx.params;
  return json(renderOrg(await orgs.deleteMember(req, name, username)));
}

export function listOrgs(req: Req): Response {
  return json({ organizations: orgs.listOrgs(req).map(renderOrg) });
}

export async function createOrg(req: Req): Promise<Response> {
  const body = await readPayload(req, "organization");
  return json(renderOrg(await orgs.createOrg(req, body)));
}

export async function updateOrg(req: Req): Promise<Response> {
  const body = await readPayload(req, "organization");
  return json(renderOrg(await orgs.updateOrg(req, req.ctx.params.name ?? "", body)));
}

export function getMaintenance(req: Req): Response {
  return json(maintenance.getMaintenance(req));
}

export async function putMaintenance(req: Req): Promise<Response> {
  const body = await readPayload(req, "maintenance");
  return json(await maintenance.putMaintenance(req, body));
}
