// The ACL policy language: parse + validate rules, render RulesJSON, merge policies into an Acl.
// Rules are read as Nomad's acl.Parse reads them: policy_hcl.ts / policy_json.ts build HCL v1's item tree
// (policy_ast.ts), policy_decode.ts fills Nomad's policy structure as hcl.Decode does, policy_parse.ts runs
// Nomad's checks and expansions (policy_capabilities.ts), policy_rules_json.ts renders RulesJSON.

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
