// ACL role endpoints (docs/events.md#acl-roles): create, update, read by ID or name, list by ID prefix, delete.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { uuid } from "../../lib/ids.ts";
import { bodyField, policyCollection } from "./acl_model.ts";
import { parseRoleInput } from "./acl_role_input.ts";
import {
  renderRole,
  roleCollection,
  roleEvent,
  roleHash,
  roleNameLock,
  type StoredRole,
} from "./acl_role_model.ts";
import { type AclState, permissionDenied } from "./acl_state.ts";
import { decodeObjectBody, emptyOk, nomadJson, optionalString, requireAclsEnabled } from "./acl_http.ts";

const roleNotFound = () => new ApiError(404, "ACL role not found");

export function createAclRoleRoutes(ctx: AppContext, acl: AclState): Route[] {
  const { store } = ctx.data;

  /** Create (no path ID) or update: Nomad's checks, in its order, then one commit with its event. */
  async function upsert(req: RequestContext, pathId: string | undefined): Promise<Response> {
    requireAclsEnabled(acl);
    const body = await decodeObjectBody(req);
    if (pathId !== undefined) {
      const given = optionalString("ACLRole", "ID", bodyField(body, "ID")) ?? "";
      if (given !== pathId) throw new ApiError(400, "ACL role ID does not match request path");
    }
    acl.requireManagement(req);
    const input = parseRoleInput(body);
    const locks = [roleNameLock(input.name), ...input.policies.map((p) => `${policyCollection}/${p}`)];
    if (input.id !== "") locks.push(`${roleCollection}/${input.id}`);
    const { result } = await store.transact(locks, () => {
      const sameName = acl.roleByName(input.name);
      const current = input.id === "" ? undefined : acl.roleById(input.id);
      if (input.id === "" && sameName) throw new ApiError(400, `role with name ${input.name} already exists`);
      if (input.id !== "" && !current) throw new ApiError(400, `cannot find role ${input.id}`);
      for (const p of input.policies) {
        if (!store.get(policyCollection, p)) throw new ApiError(400, `cannot find policy ${p}`);
      }
      if (sameName && current && sameName.ID !== current.ID) {
        throw new ApiError(400, `ACL role with name ${input.name} already exists`);
      }
      const fields = {
        Name: input.name,
        Description: input.description,
        Policies: input.policies.map((Name) => ({ Name })),
      };
      const hash = roleHash(fields);
      // An update that changes nothing writes nothing, as in Nomad.
      if (current && current.Hash === hash) return { result: current };
      const id = current?.ID ?? uuid();
      return (index: number) => {
        const role: StoredRole = {
          ID: id,
          ...fields,
          Hash: hash,
          CreateIndex: current?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        return {
          writes: [{ collection: roleCollection, id, doc: { ...role }, ifVersion: current ? undefined : 0 }],
          events: [roleEvent("ACLRoleUpserted", role)],
          result: role,
        };
      };
    });
    return nomadJson(renderRole(result), result.ModifyIndex, false);
  }

  /** Management reads any role (404 when there is none); another token only a role it links to (else 403). */
  function readRole(req: RequestContext, find: (req: RequestContext) => StoredRole | undefined): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    const role = find(req);
    if (!caller.acl.management && !(role && caller.roleIds.includes(role.ID))) throw permissionDenied();
    if (!role) throw roleNotFound();
    return nomadJson(renderRole(role), role.ModifyIndex, true);
  }

  function list(req: RequestContext): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    const prefix = req.url.searchParams.get("prefix") ?? "";
    const roles = [...store.list<StoredRole>(roleCollection)].map((s) => s.doc)
      .filter((r) => r.ID.startsWith(prefix) && (caller.acl.management || caller.roleIds.includes(r.ID)))
      .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
    return nomadJson(roles.map(renderRole), Math.max(1, acl.tableIndex(roleCollection)), true);
  }

  async function remove(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const id = req.params.id!;
    const { index } = await store.transact([`${roleCollection}/${id}`], () => {
      const current = acl.roleById(id);
      if (!current) throw roleNotFound();
      // Tokens keep their link; reads and rights resolve roles at request time and skip a deleted one.
      return {
        writes: [{ collection: roleCollection, id, doc: null }],
        events: [roleEvent("ACLRoleDeleted", current)],
      };
    });
    return emptyOk(index);
  }

  const byId = "/v1/acl/role/:id([^/]+)";
  return [
    { method: ["POST", "PUT"], path: "/v1/acl/role", handler: (req) => upsert(req, undefined) },
    { method: "GET", path: "/v1/acl/roles", handler: list },
    {
      method: "GET",
      path: "/v1/acl/role/name/:name([^/]+)",
      handler: (req) => readRole(req, (r) => acl.roleByName(r.params.name!)),
    },
    { method: ["POST", "PUT"], path: byId, handler: (req) => upsert(req, req.params.id!) },
    { method: "GET", path: byId, handler: (req) => readRole(req, (r) => acl.roleById(r.params.id!)) },
    { method: "DELETE", path: byId, handler: remove },
  ];
}
