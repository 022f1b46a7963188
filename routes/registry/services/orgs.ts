// An organization's members for a caller (admins and the organization's owners): add or change one's role,
// remove one.

import { existingOrg, requireOrgManager } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { FieldErrors } from "../core/fields.ts";
import { now, type OrgDoc, type OrgMember, ORGS } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";

/** A membership as a caller sends it, unchecked: `role` is "owner" or "member" (the default). */
export type MemberInput = { role?: unknown };

/** Makes the user `username` a member of `orgName` with the role asked; the organization after. */
export async function putMember(
  who: Actor,
  orgName: string,
  username: string,
  input: MemberInput,
): Promise<OrgDoc> {
  requireOrgManager(who, orgName);
  const errors = new FieldErrors();
  const role = errors.text(input, "role", "Role", 16) ?? "member";
  if (role !== "owner" && role !== "member") errors.add("Role must be owner or member");
  const user = who.reg.user(username);
  if (!user) throw notFound();
  errors.throwIfAny();
  return await who.reg.write(() => {
    const current = existingOrg(who.reg, orgName);
    const members = current.doc.members.filter((m) => m.username.toLowerCase() !== user.id);
    members.push({ username: user.doc.username, role: role as OrgMember["role"] });
    const next = { ...current.doc, members, updated_at: now() };
    return {
      writes: [{ collection: ORGS, id: current.id, doc: next, ifVersion: current.version }],
      result: next,
    };
  });
}

/** Removes the user `username` from `orgName` (404 when not a member); the organization after. */
export async function deleteMember(who: Actor, orgName: string, username: string): Promise<OrgDoc> {
  requireOrgManager(who, orgName);
  const key = username.toLowerCase();
  return await who.reg.write(() => {
    const current = existingOrg(who.reg, orgName);
    const members = current.doc.members.filter((m) => m.username.toLowerCase() !== key);
    if (members.length === current.doc.members.length) throw notFound();
    const next = { ...current.doc, members, updated_at: now() };
    return {
      writes: [{ collection: ORGS, id: current.id, doc: next, ifVersion: current.version }],
      result: next,
    };
  });
}
