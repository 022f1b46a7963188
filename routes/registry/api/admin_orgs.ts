// Admin API for organizations and their members (§5), and the maintenance toggle.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { existingOrg as coreExistingOrg, requireAdmin } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { unprocessable } from "../core/errors.ts";
import { ORGS } from "../core/model.ts";
import { deleteNamespaceBoxes, renderOrg } from "../services/accounts.ts";
import * as orgs from "../services/orgs.ts";
import * as maintenance from "../services/maintenance.ts";

function existingOrg(req: Req) {
  return coreExistingOrg(req.reg, req.ctx.params.name ?? "");
}

export function getOrg(req: Req): Response {
  requireAdmin(req);
  return json(renderOrg(existingOrg(req).doc));
}

export async function deleteOrg(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  existingOrg(req);
  const cascade = req.ctx.url.searchParams.get("cascade") === "true";
  const reg = req.reg;
  const deleted = await reg.write(() => {
    const current = existingOrg(req);
    if (!cascade && reg.boxesOf(current.id).length > 0) {
      throw unprocessable(["Organization owns boxes; delete them first or pass cascade=true"]);
    }
    const boxes = deleteNamespaceBoxes(
      reg,
      { reg, origin: req.origin, insider: true },
      current.id,
      actor.username,
    );
    // Its service principals and their tokens go too: a later namespace of the same name must not inherit them.
    const principals = reg.principals.orgRemovals(current.id);
    return {
      writes: [...boxes.writes, ...principals, { collection: ORGS, id: current.id, doc: null }],
      events: boxes.events,
      result: { doc: current.doc, principals },
    };
  });
  reg.principals.forget(deleted.principals);
  return json(renderOrg(deleted.doc));
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
