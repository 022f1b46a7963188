// Renders a parsed policy as the ACL API's `RulesJSON`, as Nomad marshals its acl.Policy: absent blocks and
// lists that were never written are null, a list written empty (`capabilities = []`) stays `[]`, expanded
// capabilities keep Nomad's order and duplicates. Nomad Enterprise's Sentinel rule is left out, as in Nomad CE.

import type { CapabilityRule, LevelRule, NamedRule, NamespaceRule, ParsedPolicy } from "./policy_parse.ts";

const copyList = (list: readonly string[] | null): string[] | null => (list === null ? null : [...list]);

export function renderRulesJson(policy: ParsedPolicy): Record<string, unknown> {
  return {
    Namespaces: policy.Namespaces?.map(renderNamespace) ?? null,
    NodePools: policy.NodePools?.map(renderNamed) ?? null,
    HostVolumes: policy.HostVolumes?.map(renderNamed) ?? null,
    Agent: renderLevel(policy.Agent),
    Node: renderLevel(policy.Node),
    Operator: renderCapabilityRule(policy.Operator),
    Quota: renderLevel(policy.Quota),
    Plugin: renderLevel(policy.Plugin),
  };
}

function renderNamespace(ns: NamespaceRule) {
  return {
    Name: ns.Name,
    Policy: ns.Policy,
    Capabilities: copyList(ns.Capabilities),
    Variables: ns.Variables
      ? {
        Paths: ns.Variables.Paths?.map((p) => ({
          PathSpec: p.PathSpec,
          Capabilities: copyList(p.Capabilities),
        })) ??
          null,
      }
      : null,
  };
}

function renderNamed(rule: NamedRule) {
  return { Name: rule.Name, Policy: rule.Policy, Capabilities: copyList(rule.Capabilities) };
}

function renderLevel(rule: LevelRule | null): { Policy: string } | null {
  return rule ? { Policy: rule.Policy } : null;
}

function renderCapabilityRule(rule: CapabilityRule | null) {
  return rule ? { Policy: rule.Policy, Capabilities: copyList(rule.Capabilities) } : null;
}
