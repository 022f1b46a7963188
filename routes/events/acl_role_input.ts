// Validation of ACL role bodies (create and update) into the fields wharf stores (docs/events.md#acl-roles).

import { ApiError } from "../../lib/errors.ts";
import { bodyField } from "./acl_model.ts";
import { aclObjectName } from "./acl_names.ts";
import { fieldTypeError, optionalString } from "./acl_http.ts";

/** A role body as decoded: the links are deduplicated, not yet checked against stored policies. */
export interface RoleInput {
  id: string;
  name: string;
  description: string;
  policies: string[];
}

export const invalidRole = (reason: string) => new ApiError(400, `role 0 invalid: ${reason}`);

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
  if (!aclObjectName.test(name)) throw invalidRole(`invalid name '${name}'`);
  if (description.length > 256) throw invalidRole("description longer than 256");
  if (policies.length < 1) throw invalidRole("at least one policy should be specified");
  return { id, name, description, policies };
}
