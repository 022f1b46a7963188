// Admin API for organizations and their members (§5), and the maintenance toggle.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { existingOrg as coreExistingOrg, requireAdmin } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors, type Payload } from "../core/fields.ts";
import { unprocessable } from "../core/errors.ts";
import { now, type OrgDoc, type OrgMember, ORGS, SETTINGS } from "../core/model.ts";
import { LONG_TEXT_MAX, namespacePattern, reservedNames } from "../core/rules.ts";
import { deleteNamespaceBoxes, renderOrg } from "../services/accounts.ts";
import * as members from "../services/orgs.ts";

function existingOrg(req: Req) {
  return coreExistingOrg(req.reg, req.ctx.params.name ?? "");
}

function readMembers(req: Req, errors: FieldErrors, body: Payload): OrgMember[] | undefined {
  const raw = body.members;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) {
    errors.add("Members must be a list of {username, role}");
    return undefined;
  }
  const out: OrgMember[] = [];
  for (const m of raw) {
    const username = typeof m === "object" && m !== null ? (m as Payload).username : undefined;
    const role = typeof m === "object" && m !== null ? ((m as Payload).role ?? "member") : undefined;
    const user = typeof username === "string" ? req.reg.user(username) : undefined;
    if (!user) errors.add(`Member ${JSON.stringify(username ?? null)} is not a user`);
    else if (role !== "owner" && role !== "member") errors.add("Role must be owner or member");
    else if (out.some((o) => o.username.toLowerCase() === user.id)) {
      errors.add(`Member ${user.doc.username} is listed twice`);
    } else out.push({ username: user.doc.username, role });
  }
  return out;
}

export function listOrgs(req: Req): Response {
  requireAdmin(req);
  return json({ organizations: [...req.reg.store.list<OrgDoc>(ORGS)].map((o) => renderOrg(o.doc)) });
}

export function getOrg(req: Req): Response {
  requireAdmin(req);
  return json(renderOrg(existingOrg(req).doc));
}

export async function createOrg(req: Req): Promise<Response> {
  const body = await readPayload(req, "organization");
  requireAdmin(req);
  const errors = new FieldErrors();
  const name = errors.required(body, "name", "Name", 40);
  if (name !== undefined && !namespacePattern.test(name)) errors.add("Name is invalid");
  else if (name !== undefined && reservedNames.has(name.toLowerCase())) errors.add("Name is reserved");
  const profile = errors.text(body, "profile", "Profile", LONG_TEXT_MAX);
  const members = readMembers(req, errors, body) ?? [];
  errors.throwIfAny();
  const reg = req.reg;
  const key = name!.toLowerCase();
  const doc = await reg.write(() => {
    if (reg.namespaceName(key) !== undefined) throw unprocessable(["Name has already been taken"]);
    const t = now();
    const doc: OrgDoc = {
      name: name!,
      profile: profile ?? null,
      delinquent: false,
      members,
      created_at: t,
      updated_at: t,
    };
    return { writes: [{ collection: ORGS, id: key, doc, ifVersion: 0 }], result: doc };
  });
  return json(renderOrg(doc));
}

export async function updateOrg(req: Req): Promise<Response> {
  const body = await readPayload(req, "organization");
  requireAdmin(req);
  existingOrg(req);
  const errors = new FieldErrors();
  const profile = errors.text(body, "profile", "Profile", LONG_TEXT_MAX);
  const delinquent = errors.bool(body, "delinquent", "Delinquent");
  errors.throwIfAny();
  const doc = await req.reg.write(() => {
    const current = existingOrg(req);
    const next: OrgDoc = { ...current.doc, updated_at: now() };
    if (profile !== undefined) next.profile = profile;
    if (typeof delinquent === "boolean") next.delinquent = delinquent;
    return {
      writes: [{ collection: ORGS, id: current.id, doc: next, ifVersion: current.version }],
      result: next,
    };
  });
  return json(renderOrg(doc));
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
  return json(renderOrg(await members.putMember(req, name, username, body)));
}

export async function deleteMember(req: Req): Promise<Response> {
  const { name = "", username = "" } = req.ctx.params;
  return json(renderOrg(await members.deleteMember(req, name, username)));
}

export function getMaintenance(req: Req): Response {
  requireAdmin(req);
  return json(maintenanceState(req));
}

function maintenanceState(req: Req) {
  const stored = req.reg.store.get<{ enabled: boolean }>(SETTINGS, "maintenance")?.doc.enabled === true;
  return {
    enabled: stored || req.reg.settings.maintenanceForced,
    forced: req.reg.settings.maintenanceForced,
  };
}

export async function putMaintenance(req: Req): Promise<Response> {
  const body = await readPayload(req, "maintenance");
  requireAdmin(req);
  const errors = new FieldErrors();
  const enabled = errors.bool(body, "enabled", "Enabled");
  if (enabled === undefined || enabled === null) errors.add("Enabled can't be blank");
  errors.throwIfAny();
  await req.reg.write(() => ({
    writes: [{ collection: SETTINGS, id: "maintenance", doc: { enabled: enabled === true } }],
  }));
  return json(maintenanceState(req));
}
