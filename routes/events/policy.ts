// The ACL policy language: parse + validate rules, render RulesJSON, merge policies into an Acl.

export { PolicyError } from "./policy_error.ts";
export {
  type CapabilityRule,
  type LevelRule,
  type NamedRule,
  type NamespaceRule,
  type ParsedPolicy,
  parsePolicy,
} from "./policy_parse.ts";
export type { VariablePathRule } from "./policy_parse.ts";
export { renderRulesJson } from "./policy_rules_json.ts";
export { allowAllAcl, compileAcl, globMatches, lookupNamespace, mergePolicies } from "./policy_acl.ts";
export type { MergedNamespaces, MergedPolicies } from "./policy_acl.ts";
