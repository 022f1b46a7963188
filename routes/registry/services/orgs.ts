// Organizations for a caller: list, create, update and delete them (admins), and their members (admins and the
// organization's owners: add or change one's role, remove one).

import { existingOrg, requireAdmin, requireOrgManager } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { FieldErrors } from "../core/fields.ts";
import { now, type OrgDoc, type OrgMember, ORGS } from "../core/model.ts";
import type { Payload } from "../core/fields.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { LONG_TEXT_MAX } from "../core/rules.ts";
import { allDocs, type NamespaceRemoval, newNamespaceName } from "./accounts.ts";

/** An organization's fields as an administrator sends them, unchecked. */
export type OrgInput = { name?: unknown; profile?: unknown; delinquent?: unknown; members?: unknown };

function readMembers(reg: Registry, errors: FieldErrors, body: OrgInput): OrgMember[] | undefined {
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
    const user = typeof username === "string" ? reg.user(username) : undefined;
    if (!user) errors.add(`Member ${JSON.stringify(username ?? null)} is not a user`);
    else if (role !== "owner" && role !== "member") errors.add("Role must be owner or member");
    else if (out.some((o) => o.username.toLowerCase() === user.id)) {
      errors.add(`Member ${user.doc.username} is listed twice`);
    } else out.push({ username: user.doc.username, role });
  }
  return out;
}

/** Every organization (admins only). */
export function listOrgs(who: Actor): OrgDoc[] {
  return allDocs<OrgDoc>(who, ORGS);
}

/** A new organization (admins only), with the members listed. */
export async function createOrg(who: Actor, body: OrgInput): Promise<OrgDoc> {
  requireAdmin(who);
  const errors = new FieldErrors();
  const name = newNamespaceName(errors, body, "name", "Name");
  const profile = errors.text(body, "profile", "Profile", LONG_TEXT_MAX);
  const members = readMembers(who.reg, errors, body) ?? [];
  errors.throwIfAny();
  const reg = who.reg;
  const key = name!.toLowerCase();
  return await reg.write(() => {
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
}

/** Changes the organization's profile or billing state (admins only): the organization after. */
export async function updateOrg(who: Actor, name: string, body: OrgInput): Promise<OrgDoc> {
  requireAdmin(who);
  existingOrg(who.reg, name);
  const errors = new FieldErrors();
  const profile = errors.text(body, "profile", "Profile", LONG_TEXT_MAX);
  const delinquent = errors.bool(body, "delinquent", "Delinquent");
  errors.throwIfAny();
  return await who.reg.write(() => {
    const current = existingOrg(who.reg, name);
    const next: OrgDoc = { ...current.doc, updated_at: now() };
    if (profile !== undefined) next.profile = profile;
    if (typeof delinquent === "boolean") next.delinquent = delinquent;
    return {
      writes: [{ collection: ORGS, id: current.id, doc: next, ifVersion: current.version }],
      result: next,
    };
  });
}

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

/**
 * How the organization `name` is deleted (`deleteNamespace`, admins only): its service principals and their
 * tokens go with it (a later namespace of the same name must not inherit them).
 */
export function orgRemoval(reg: Registry, name: string): NamespaceRemoval<OrgDoc> {
  return {
    label: "Organization",
    find: () => existingOrg(reg, name),
    writes: (
      current,
    ) => [...reg.principals.orgRemovals(current.id), { collection: ORGS, id: current.id, doc: null }],
  };
}
