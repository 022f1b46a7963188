// Shared pieces of the admin API: renderings of users and organizations, and cascade deletion.

import type { DocWrite, EventInput, StoredDoc } from "../../../lib/store/mod.ts";
import { notFound } from "../core/errors.ts";
import {
  BOXES,
  type OrgDoc,
  ORGS,
  SMS_CODES,
  type TokenDoc,
  TOKENS,
  type UserDoc,
  USERS,
} from "../core/model.ts";
import { deliveryMethods } from "../core/twofactor.ts";
import type { Registry } from "../core/registry.ts";
import { boxEvent } from "../core/events.ts";
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

/** Writes removing a user's tokens and memberships. */
export function userRemovalWrites(reg: Registry, key: string): DocWrite[] {
  const writes: DocWrite[] = [];
  for (const t of reg.store.list<TokenDoc>(TOKENS)) {
    if (t.doc.username.toLowerCase() === key) writes.push({ collection: TOKENS, id: t.id, doc: null });
  }
  for (const o of reg.store.list<OrgDoc>(ORGS)) {
    const members = o.doc.members.filter((m) => m.username.toLowerCase() !== key);
    if (members.length !== o.doc.members.length) {
      writes.push({ collection: ORGS, id: o.id, doc: { ...o.doc, members } });
    }
  }
  writes.push(...smsCodeRemoval(reg, key));
  writes.push({ collection: USERS, id: key, doc: null });
  return writes;
}

/** Deletes the user's SMS code in flight, if any (mobile changed, two-factor off, user deleted). */
export function smsCodeRemoval(reg: Registry, key: string): DocWrite[] {
  return reg.store.get(SMS_CODES, key) ? [{ collection: SMS_CODES, id: key, doc: null }] : [];
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
