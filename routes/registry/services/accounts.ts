// Shared pieces of the admin services: renderings of users and organizations, new names, listing, and
// deleting a namespace with its boxes.

import type { DocWrite, EventInput, StoredDoc } from "../../../lib/store/mod.ts";
import { requireAdmin, requireUser } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import type { FieldErrors, Payload } from "../core/fields.ts";
import {
  BOXES,
  CODE_FAILURES,
  type OrgDoc,
  ORGS,
  SMS_CODES,
  type SmsCodeDoc,
  type TokenDoc,
  TOKENS,
  type UserDoc,
  USERS,
} from "../core/model.ts";
import { deliveryMethods } from "../core/twofactor.ts";
import { hasCode, withoutCode } from "../core/sms_sends.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { boxEvent } from "../core/events.ts";
import { namespacePattern, reservedNames } from "../core/rules.ts";
import type { View } from "../core/render.ts";

export function renderAdminUser(reg: Registry, user: UserDoc) {
  const key = user.username.toLowerCase();
  const organizations = [...reg.store.list<OrgDoc>(ORGS)]
    .filter((o) => o.doc.members.some((m) => m.username.toLowerCase() === key))
    .map((o) => o.doc.name);
  return {
    username: user.username,
    email: user.email,
    mobile: user.mobile,
    admin: user.admin,
    two_factor_enabled: user.two_factor_enabled,
    two_factor: { enabled: user.two_factor_enabled, delivery_methods: deliveryMethods(user) },
    profile: user.profile,
    delinquent: user.delinquent,
    organizations,
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
}

export function renderOrg(org: OrgDoc) {
  return {
    name: org.name,
    profile: org.profile,
    delinquent: org.delinquent,
    members: org.members.map((m) => ({ username: m.username, role: m.role })),
    created_at: org.created_at,
    updated_at: org.updated_at,
  };
}

/** Writes and events deleting every box of namespace `key` (one BoxDeleted each). */
export function deleteNamespaceBoxes(
  reg: Registry,
  view: View,
  key: string,
  actor: string,
): { writes: DocWrite[]; events: EventInput[] } {
  const writes: DocWrite[] = [];
  const events: EventInput[] = [];
  for (const box of reg.boxesOf(key)) {
    events.push(boxEvent("BoxDeleted", view, box, actor));
    writes.push({ collection: BOXES, id: box.id, doc: null });
  }
  return { writes, events };
}

/** Writes revoking every API token of the user `key` (not an organization's service principals' tokens). */
export function userTokenRemovals(reg: Registry, key: string): DocWrite[] {
  const writes: DocWrite[] = [];
  for (const t of reg.store.list<TokenDoc>(TOKENS)) {
    if (typeof t.doc.principal === "string" || t.doc.username.toLowerCase() !== key) continue;
    writes.push({ collection: TOKENS, id: t.id, doc: null });
  }
  return writes;
}

/** Writes removing a user's tokens and memberships. */
export function userRemovalWrites(reg: Registry, key: string): DocWrite[] {
  const writes: DocWrite[] = userTokenRemovals(reg, key);
  for (const o of reg.store.list<OrgDoc>(ORGS)) {
    const members = o.doc.members.filter((m) => m.username.toLowerCase() !== key);
    if (members.length !== o.doc.members.length) {
      writes.push({ collection: ORGS, id: o.id, doc: { ...o.doc, members } });
    }
  }
  writes.push(...smsCodeRemoval(reg, key), ...codeFailuresRemoval(reg, key));
  writes.push({ collection: USERS, id: key, doc: null });
  return writes;
}

/** Deletes the user's SMS document (the code in flight and the send times), if any: the user is deleted. */
export function smsCodeRemoval(reg: Registry, key: string): DocWrite[] {
  return reg.store.get(SMS_CODES, key) ? [{ collection: SMS_CODES, id: key, doc: null }] : [];
}

/** Deletes the times of the user's wrong two-factor codes, if any: the user is deleted. */
function codeFailuresRemoval(reg: Registry, key: string): DocWrite[] {
  return reg.store.get(CODE_FAILURES, key) ? [{ collection: CODE_FAILURES, id: key, doc: null }] : [];
}

/** Voids the user's SMS code in flight, if any (mobile changed, two-factor off); the send times stay counted. */
export function smsCodeVoiding(reg: Registry, key: string): DocWrite[] {
  const stored = reg.store.get<SmsCodeDoc>(SMS_CODES, key);
  if (!stored || !hasCode(stored.doc)) return [];
  return [{
    collection: SMS_CODES,
    id: key,
    doc: withoutCode(stored.doc, Date.now()),
    ifVersion: stored.version,
  }];
}

export function adminCount(reg: Registry): number {
  let n = 0;
  for (const u of reg.store.list<UserDoc>(USERS)) if (u.doc.admin) n++;
  return n;
}

/** The user `name` (404 when absent). */
export function existingUserOf(reg: Registry, name: string): StoredDoc<UserDoc> {
  const user = reg.user(name);
  if (!user) throw notFound();
  return user;
}

/** Whose account a service acts on: a user named by an administrator (the admin API), or the caller's own. */
export type Whose = { user: string } | "own";

/**
 * The account's key, and the administrator naming it (401 or 403 for anyone else; 404 when it does not
 * exist).
 */
export function accountOf(who: Actor, whose: Whose): { key: string; admin: UserDoc | undefined } {
  if (whose === "own") return { key: requireUser(who).username.toLowerCase(), admin: undefined };
  const admin = requireAdmin(who);
  return { key: existingUserOf(who.reg, whose.user).id, admin };
}

/** Every document of `collection` (admins only). */
export function allDocs<D>(who: Actor, collection: string): D[] {
  requireAdmin(who);
  return [...who.reg.store.list<D>(collection)].map((d) => d.doc);
}

/** A new user's or organization's name from `body[key]`: required, a valid name, not reserved (422 messages). */
export function newNamespaceName(
  errors: FieldErrors,
  body: Payload,
  key: string,
  label: string,
): string | undefined {
  const name = errors.required(body, key, label, 40);
  if (name !== undefined && !namespacePattern.test(name)) errors.add(`${label} is invalid`);
  else if (name !== undefined && reservedNames.has(name.toLowerCase())) errors.add(`${label} is reserved`);
  return name;
}

/** How a user or an organization is deleted. */
export interface NamespaceRemoval<D> {
  /** "User" or "Organization", in the 422 message about its boxes. */
  label: string;
  /** The namespace as stored now (404 when it does not exist). */
  find(): StoredDoc<D>;
  /** 422 messages of its own, before the one about its boxes. */
  refusals?(current: StoredDoc<D>): string[];
  /** Writes removing it and what hangs on it (tokens, memberships, service principals). */
  writes(current: StoredDoc<D>): DocWrite[];
}

/**
 * Deletes a user or an organization (admins only), with its boxes when `cascade` (a 422 when it owns boxes
 * otherwise; one BoxDeleted each): the namespace as it was. Removed tokens' and principals' usage is forgotten.
 */
export async function deleteNamespace<D>(
  who: Actor,
  removal: NamespaceRemoval<D>,
  cascade: boolean,
): Promise<D> {
  const admin = requireAdmin(who);
  removal.find();
  const reg = who.reg;
  const deleted = await reg.write(() => {
    const current = removal.find();
    const problems = removal.refusals?.(current) ?? [];
    if (!cascade && reg.boxesOf(current.id).length > 0) {
      problems.push(`${removal.label} owns boxes; delete them first or pass cascade=true`);
    }
    if (problems.length) throw unprocessable(problems);
    const boxes = deleteNamespaceBoxes(
      reg,
      { reg, origin: who.origin, insider: true },
      current.id,
      admin.username,
    );
    const writes = removal.writes(current);
    return {
      writes: [...boxes.writes, ...writes],
      events: boxes.events,
      result: { doc: current.doc, writes },
    };
  });
  reg.principals.forget(deleted.writes);
  return deleted.doc;
}
