// ACL binding rule endpoints (docs/events.md#sso-login): upsert (merged and validated as Nomad does, the
// selector parsed as a bexpr filter), read, list and delete, all management-only.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { uuid } from "../../lib/ids.ts";
import { parseFilter } from "../../lib/bexpr/parse.ts";
import { bodyField, contentHash, rfc3339 } from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { decodeObjectBody, nomadJson, optionalString, requireAclsEnabled } from "./acl_http.ts";
import { multiError } from "./acl_auth_method_input.ts";
import {
  bindingRuleCollection,
  bindingRuleEvent,
  type BindType,
  renderBindingRule,
  renderBindingRuleStub,
  type StoredBindingRule,
} from "./acl_sso_model.ts";
import { ssoLock, type SsoState } from "./acl_sso_state.ts";
import { readHandler, removeHandler, resourceRoutes, upsertStep } from "./acl_sso_routes.ts";

const struct = "ACLBindingRule";
const maxDescription = 256;
const maxField = 4096;

interface RuleInput {
  id: string;
  description: string;
  authMethod: string;
  selector: string;
  bindType: string;
  bindName: string;
}

function decodeRule(body: Record<string, unknown>): RuleInput {
  const field = (name: string) => {
    const v = optionalString(struct, name, bodyField(body, name)) ?? "";
    if (v.length > maxField) throw new ApiError(400, `${name} is longer than ${maxField}`);
    return v;
  };
  return {
    id: field("ID"),
    description: field("Description"),
    authMethod: field("AuthMethod"),
    selector: field("Selector"),
    bindType: field("BindType"),
    bindName: field("BindName"),
  };
}

/** Nomad's ACLBindingRule.Validate: the reasons in its order, [] when valid. */
function ruleProblems(r: RuleInput): string[] {
  const errors: string[] = [];
  if (r.authMethod === "") errors.push("auth method is missing");
  if (r.description.length > maxDescription) errors.push(`description longer than ${maxDescription}`);
  switch (r.bindType) {
    case "":
      errors.push("bind type is missing");
      break;
    case "role":
    case "policy":
      if (r.bindName === "") errors.push("bind name is missing");
      break;
    case "management":
      if (r.bindName !== "") errors.push("bind name should be empty");
      break;
    default:
      errors.push(`unsupported bind type: ${JSON.stringify(r.bindType)}`);
  }
  if (r.selector !== "") {
    try {
      parseFilter(r.selector);
    } catch (err) {
      errors.push(`selector is invalid: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return errors;
}

export function createAclBindingRuleRoutes(ctx: AppContext, acl: AclState, sso: SsoState): Route[] {
  const { store } = ctx.data;

  async function upsert(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const input = decodeRule(await decodeObjectBody(req));
    const pathId = req.params.key;
    if (pathId !== undefined && input.id === "") input.id = pathId;
    if (pathId !== undefined && pathId !== input.id) {
      throw new ApiError(400, "ACL binding rule ID does not match request path");
    }
    const { result } = await store.transact([ssoLock], () => {
      const existing = input.id ? sso.bindingRule(input.id) : undefined;
      if (input.id) {
        if (!existing) throw new ApiError(400, `cannot find binding rule ${input.id}`);
        // Nomad's Merge: an empty BindName, BindType or AuthMethod keeps the stored one.
        input.bindName ||= existing.BindName;
        input.bindType ||= existing.BindType;
        input.authMethod ||= existing.AuthMethod;
        if (input.authMethod !== existing.AuthMethod) {
          throw new ApiError(400, "cannot update auth method for binding rule, create a new rule instead");
        }
      }
      const problems = ruleProblems(input);
      if (problems.length) throw new ApiError(400, `binding rule 0 invalid: ${multiError(problems)}`);
      if (!sso.authMethod(input.authMethod)) {
        throw new ApiError(400, `ACL auth method ${input.authMethod} not found`);
      }
      const id = existing?.ID ?? uuid();
      const now = Date.now();
      return (index: number) => {
        const rule: StoredBindingRule = {
          ID: id,
          Description: input.description,
          AuthMethod: input.authMethod,
          Selector: input.selector,
          BindType: input.bindType as BindType,
          BindName: input.bindName,
          Hash: contentHash([
            id,
            input.description,
            input.authMethod,
            input.selector,
            input.bindType,
            input.bindName,
          ]),
          CreateTime: existing?.CreateTime ?? rfc3339(now),
          ModifyTime: rfc3339(now),
          CreateIndex: existing?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        return upsertStep(bindingRuleCollection, id, rule, bindingRuleEvent("ACLBindingRuleUpserted", rule));
      };
    });
    return nomadJson(renderBindingRule(result), result.ModifyIndex, false);
  }

  const read = readHandler(acl, (id) => sso.bindingRule(id), "ACL binding rule not found", renderBindingRule);

  function list(req: RequestContext): Response {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    return nomadJson(
      sso.bindingRules().map(renderBindingRuleStub),
      sso.tableIndex(bindingRuleCollection),
      true,
    );
  }

  const deleted = (r: StoredBindingRule) => bindingRuleEvent("ACLBindingRuleDeleted", r);
  const remove = removeHandler(acl, sso, bindingRuleCollection, "ACL binding rule not found", deleted);
  return resourceRoutes("/v1/acl/binding-rule", { list, upsert, read, remove });
}
