// ACL roles (docs/events.md#acl-roles): the stored shape, its wire renderings and events, and body decoding.

import { ApiError } from "../../lib/errors.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import { bodyField, contentHash } from "./acl_model.ts";
import { fieldTypeError, optionalString } from "./acl_http.ts";

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

/** A role body as decoded: the links are deduplicated, not yet checked against stored policies. */
export interface RoleInput {
  id: string;
  name: string;
  description: string;
  policies: string[];
}

const roleName = /^[a-zA-Z0-9-]{1,128}$/;
export const invalidRole = (reason: string) => new ApiError(400, `role 0 invalid: ${reason}`);

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

/** Decodes an ACL role body and runs Nomad's static checks (name, description, at least one policy). */
export function parseRoleInput(body: Record<string, unknown>): RoleInput {
  const id = optionalString("ACLRole", "ID", bodyField(body, "ID")) ?? "";
  const name = optionalString("ACLRole", "Name", bodyField(body, "Name")) ?? "";
  const description = optionalString("ACLRole", "Description", bodyField(body, "Description")) ?? "";
  const raw = bodyField(body, "Policies");
  const policies: string[] = [];
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw fieldTypeError("ACLRole", "Policies", raw, "[]*structs.ACLRolePolicyLink");
    for (const link of raw) {
      if (link === null) continue;
      if (typeof link !== "object" || Array.isArray(link)) {
        throw fieldTypeError("ACLRole", "Policies", link, "structs.ACLRolePolicyLink");
      }
      const linked = optionalString(
        "ACLRolePolicyLink",
        "Name",
        bodyField(link as Record<string, unknown>, "Name"),
      );
      if (!policies.includes(linked ?? "")) policies.push(linked ?? "");
    }
  }
  if (!roleName.test(name)) throw invalidRole(`invalid name '${name}'`);
  if (description.length > 256) throw invalidRole("description longer than 256");
  if (policies.length < 1) throw invalidRole("at least one policy should be specified");
  return { id, name, description, policies };
}
