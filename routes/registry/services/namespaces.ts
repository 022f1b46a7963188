// A user's or organization's public face: its name, profile and every box the caller may see (GET
// /api/v1/user/:username, the web console's user and organization pages).

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { isInsider } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import type { BoxDoc, OrgDoc, UserDoc } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";

export interface NamespaceRecord {
  /** The name as its owner spells it. */
  username: string;
  profile: string | null;
  user: UserDoc | undefined;
  org: OrgDoc | undefined;
  /** The caller may see the namespace's private boxes and unreleased versions. */
  insider: boolean;
  /** By name, ignoring case. */
  boxes: StoredDoc<BoxDoc>[];
}

/** The user or organization `name` (404 when neither exists). */
export function namespace(actor: Actor, name: string): NamespaceRecord {
  const reg = actor.reg;
  const key = name.toLowerCase();
  const user = reg.user(key)?.doc;
  const org = user ? undefined : reg.org(key)?.doc;
  if (!user && !org) throw notFound();
  const insider = isInsider(reg, actor.caller, key);
  const boxes = reg.boxesOf(key)
    .filter((b) => insider || !b.doc.private)
    .sort((a, b) => a.doc.name.toLowerCase() < b.doc.name.toLowerCase() ? -1 : 1);
  return {
    username: user ? user.username : org!.name,
    profile: user ? user.profile : org!.profile,
    user,
    org,
    insider,
    boxes,
  };
}
