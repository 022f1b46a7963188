// ACL roles (docs/events.md#acl-roles): the stored shape, its wire rendering and its events.

import type { EventInput } from "../../lib/store/mod.ts";
import { contentHash } from "./acl_model.ts";

export const roleCollection = "cluster/acl_roles";

/** Lock key that keeps role names unique across concurrent writes. */
export const roleNameLock = (name: string) => `cluster/acl_role_name/${name}`;

export interface StoredRole {
  ID: string;
  Name: string;
  Description: string;
  Policies: Array<{ Name: string }>;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export function roleHash(r: Pick<StoredRole, "Name" | "Description" | "Policies">): string {
  return contentHash([r.Name, r.Description, r.Policies.map((p) => p.Name)]);
}

/** Role and list stub render the same fields in Nomad's order. */
export function renderRole(r: StoredRole): Record<string, unknown> {
  return {
    ID: r.ID,
    Name: r.Name,
    Description: r.Description,
    Policies: r.Policies.map((p) => ({ Name: p.Name })),
    Hash: r.Hash,
    CreateIndex: r.CreateIndex,
    ModifyIndex: r.ModifyIndex,
  };
}

export function roleEvent(type: "ACLRoleUpserted" | "ACLRoleDeleted", r: StoredRole): EventInput {
  return {
    Topic: "ACLRole",
    Type: type,
    Key: r.ID,
    FilterKeys: [r.Name],
    Payload: { ACLRole: renderRole(r) },
  };
}
