// Renders a parsed policy as the ACL API's `RulesJSON` (spec §8): empty lists and absent blocks are null.

import type { ParsedPolicy } from "./policy_parse.ts";

export function renderRulesJson(policy: ParsedPolicy): Record<string, unknown> {
  const orNull = <T>(list: readonly T[]): T[] | null => (list.length === 0 ? null : [...list]);
  return {
    Namespaces: orNull(policy.Namespaces.map((ns) => ({
      Name: ns.Name,
      Policy: ns.Policy,
      Capabilities: orNull(ns.Capabilities),
      Variables: ns.Variables
        ? {
          Paths: ns.Variables.Paths.map((p) => ({
            PathSpec: p.PathSpec,
            Capabilities: orNull(p.Capabilities),
          })),
        }
        : null,
    }))),
    NodePools: orNull(policy.NodePools.map(renderNamed)),
    HostVolumes: orNull(policy.HostVolumes.map(renderNamed)),
    Agent: renderLevel(policy.Agent),
    Node: renderLevel(policy.Node),
    Operator: renderLevel(policy.Operator),
    Quota: renderLevel(policy.Quota),
    Plugin: renderLevel(policy.Plugin),
  };
}

function renderNamed(rule: { Name: string; Policy: string; Capabilities: string[] }) {
  return {
    Name: rule.Name,
    Policy: rule.Policy,
    Capabilities: rule.Capabilities.length === 0 ? null : [...rule.Capabilities],
  };
}

function renderLevel(rule: { Policy: string } | null): { Policy: string } | null {
  return rule ? { Policy: rule.Policy } : null;
}
