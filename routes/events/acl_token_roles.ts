// A token body's role links resolved to stored role IDs, as Nomad resolves them on token upsert.

import { ApiError } from "../../lib/errors.ts";
import type { AclState } from "./acl_state.ts";

/** IDs of the linked roles, deduplicated in order; 400 `cannot find role X` for one that does not exist. */
export function resolveRoleLinks(acl: AclState, links: Array<{ id: string; name: string }>): string[] {
  const ids: string[] = [];
  for (const link of links) {
    const role = link.id !== "" ? acl.roleById(link.id) : acl.roleByName(link.name);
    if (!role) throw new ApiError(400, `cannot find role ${link.id !== "" ? link.id : link.name}`);
    if (!ids.includes(role.ID)) ids.push(role.ID);
  }
  return ids;
}
