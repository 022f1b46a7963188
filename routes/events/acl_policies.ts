// ACL policy endpoints: upsert (validated by the policy language), read with RulesJSON, list, delete.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import {
  bodyField,
  contentHash,
  policyCollection,
  renderPolicy,
  renderPolicyStub,
  type StoredPolicy,
} from "./acl_model.ts";
import { type AclState, permissionDenied } from "./acl_state.ts";
import type { AclCaller } from "./acl_types.ts";
import { aclObjectName } from "./acl_names.ts";
import { decodeObjectBody, emptyOk, nomadJson, optionalString, requireAclsEnabled } from "./acl_http.ts";

const invalidPolicy = (reason: string) => new ApiError(400, `policy 0 invalid: ${reason}`);

export function policyEvent(type: "ACLPolicyUpserted" | "ACLPolicyDeleted", p: StoredPolicy): EventInput {
  return { Topic: "ACLPolicy", Type: type, Key: p.Name, Payload: { ACLPolicy: renderPolicy(p, null) } };
}

export function createAclPolicyRoutes(ctx: AppContext, acl: AclState): Route[] {
  const { store } = ctx.data;

  async function upsert(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const name = req.params.name!;
    const body = await decodeObjectBody(req);
    const given = optionalString("ACLPolicy", "Name", bodyField(body, "Name")) ?? "";
    if (given !== name) throw new ApiError(400, "ACL policy name does not match request path");
    const description = optionalString("ACLPolicy", "Description", bodyField(body, "Description")) ?? "";
    const rules = optionalString("ACLPolicy", "Rules", bodyField(body, "Rules")) ?? "";
    const jobAcl = bodyField(body, "JobACL") ?? null;
    if (!aclObjectName.test(name)) throw invalidPolicy(`invalid name '${name}'`);
    if (description.length > 256) throw invalidPolicy("description longer than 256");
    if (jobAcl !== null && (typeof jobAcl !== "object" || Array.isArray(jobAcl))) {
      throw invalidPolicy("JobACL must be an object or null");
    }
    try {
      acl.engine.parse(rules);
    } catch (err) {
      throw invalidPolicy(err instanceof Error ? err.message : String(err));
    }
    const { index } = await store.transact([`${policyCollection}/${name}`], () => {
      const current = store.get<StoredPolicy>(policyCollection, name)?.doc;
      return (index: number) => {
        const policy: StoredPolicy = {
          Name: name,
          Description: description,
          Rules: rules,
          JobACL: jobAcl,
          Hash: contentHash([name, description, rules, jobAcl]),
          CreateIndex: current?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        return {
          writes: [{ collection: policyCollection, id: name, doc: { ...policy } }],
          events: [policyEvent("ACLPolicyUpserted", policy)],
        };
      };
    });
    return emptyOk(index);
  }

  function read(req: RequestContext): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    const name = req.params.name!;
    if (!caller.acl.management && !caller.policies.includes(name)) throw permissionDenied();
    const policy = store.get<StoredPolicy>(policyCollection, name)?.doc;
    if (!policy) throw new ApiError(404, "ACL policy not found");
    let rulesJson: unknown = null;
    const parsed = acl.parsedPolicy(name);
    if (parsed !== undefined) rulesJson = acl.engine.rulesJson(parsed);
    return nomadJson(renderPolicy(policy, rulesJson), acl.tableIndex(policyCollection), true);
  }

  /** The policies a caller may list (management: all; else its own and its roles'), by name prefix. */
  function listFor(req: RequestContext, caller: AclCaller): Response {
    const prefix = req.url.searchParams.get("prefix") ?? "";
    let policies = [...store.list<StoredPolicy>(policyCollection)].map((s) => s.doc);
    policies = policies.filter((p) =>
      p.Name.startsWith(prefix) && (caller.acl.management || caller.policies.includes(p.Name))
    );
    policies.sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
    return nomadJson(policies.map(renderPolicyStub), acl.tableIndex(policyCollection), true);
  }

  function list(req: RequestContext): Response {
    requireAclsEnabled(acl);
    return listFor(req, acl.resolveCaller(req));
  }

  /** GET /v1/acl/policy/self: an ACL token's policies as the listing shows them; no token is refused. */
  function self(req: RequestContext): Response {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    if (caller.accessorId === "anonymous") throw permissionDenied();
    return listFor(req, caller);
  }

  async function remove(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const name = req.params.name!;
    if (!store.get(policyCollection, name)) return emptyOk(acl.tableIndex(policyCollection));
    const { index } = await store.transact([`${policyCollection}/${name}`], () => {
      const current = store.get<StoredPolicy>(policyCollection, name)?.doc;
      if (!current) return { result: undefined };
      return {
        writes: [{ collection: policyCollection, id: name, doc: null }],
        events: [policyEvent("ACLPolicyDeleted", current)],
      };
    });
    return emptyOk(index);
  }

  const path = "/v1/acl/policy/:name([^/]+)";
  return [
    { method: "GET", path: "/v1/acl/policies", handler: list },
    { method: "GET", path: "/v1/acl/policy/self", handler: self },
    {
      method: ["POST", "PUT", "DELETE"],
      path: "/v1/acl/policy/self",
      handler: () => {
        throw new ApiError(405, "Invalid method", { headers: { Allow: "GET" } });
      },
    },
    { method: ["POST", "PUT"], path, handler: upsert },
    { method: "GET", path, handler: read },
    { method: "DELETE", path, handler: remove },
  ];
}
