// Validates parsed policy rules against the block table of spec §8 and expands capabilities, in the order
// and with the reason texts of Nomad's acl.Parse.

import { PolicyError } from "./policy_error.ts";
import { parseHcl, type RuleBlock, type RuleItem, type RuleValue } from "./policy_hcl.ts";
import { parseJsonRules } from "./policy_json.ts";
import {
  expandHostVolumeCapabilities,
  expandNamespaceCapabilities,
  expandNodePoolCapabilities,
  expandVariableCapabilities,
  hostVolumeCapabilities,
  levelPolicies,
  namespaceCapabilities,
  namespacePolicies,
  nodePoolCapabilities,
  pluginPolicies,
  variableCapabilities,
} from "./policy_capabilities.ts";

export interface VariablePathRule {
  PathSpec: string;
  Capabilities: string[];
}

export interface NamespaceRule {
  Name: string;
  Policy: string;
  /** Expanded: explicit capabilities, the policy's expansion and implied ones. */
  Capabilities: string[];
  Variables: { Paths: VariablePathRule[] } | null;
}

export interface NamedRule {
  Name: string;
  Policy: string;
  Capabilities: string[];
}

export interface LevelRule {
  Policy: string;
}

/** A validated policy with capabilities expanded; plain data (JSON-safe). */
export interface ParsedPolicy {
  Namespaces: NamespaceRule[];
  NodePools: NamedRule[];
  HostVolumes: NamedRule[];
  Agent: LevelRule | null;
  Node: LevelRule | null;
  Operator: LevelRule | null;
  Quota: LevelRule | null;
  Plugin: LevelRule | null;
}

const namePattern = /^[a-zA-Z0-9*-]{1,128}$/;
const nodePoolNamePattern = /^[a-zA-Z0-9_*-]{1,128}$/;
const levelBlocks = ["agent", "node", "operator", "quota", "plugin"] as const;
const levelBlockNames: ReadonlySet<string> = new Set(levelBlocks);
const labelledBlocks = ["namespace", "node_pool", "host_volume"] as const;

/** Parses and validates policy rules (HCL, or JSON when they start with `{`); throws PolicyError only. */
export function parsePolicy(rules: string): ParsedPolicy {
  if (typeof rules !== "string") throw new PolicyError("Invalid policy: rules must be a string");
  const items = rules.trimStart().startsWith("{") ? parseJsonRules(rules) : parseHcl(rules);
  return validate(items.map(lowerCaseNames), rules);
}

/** Keys match case-insensitively, as HCL's decoder matches struct fields. */
function lowerCaseNames(item: RuleItem): RuleItem {
  if (item.kind === "attribute") return { ...item, name: item.name.toLowerCase() };
  return { ...item, name: item.name.toLowerCase(), body: item.body.map(lowerCaseNames) };
}

/** Collects keys that are unknown or repeated, reported together as Nomad does. */
class KeyCheck {
  readonly extra: string[] = [];
  #seen = new Set<string>();
  once(key: string): void {
    if (this.#seen.has(key)) this.extra.push(key);
    this.#seen.add(key);
  }
}

function fail(reason: string): PolicyError {
  return new PolicyError(`Failed to parse ACL Policy: ${reason}`);
}

function stringAttr(name: string, value: RuleValue): string {
  if (typeof value !== "string") throw fail(`${name}: expected a string, got a list`);
  return value;
}

function listAttr(name: string, value: RuleValue): string[] {
  if (typeof value === "string") throw fail(`${name}: expected a list of strings, got a string`);
  return value;
}

function goString(s: string): string {
  return JSON.stringify(s);
}

function goList(values: readonly string[]): string {
  return values.length === 0 ? "[]string(nil)" : `[]string{${values.map(goString).join(", ")}}`;
}

interface BlockAttrs {
  policy: string;
  capabilities: string[];
}

/** Reads `policy` / `capabilities` (whichever are allowed) and the sub-blocks named in `blocks`. */
function readAttrs(
  block: RuleBlock,
  allowed: readonly ("policy" | "capabilities")[],
  keys: KeyCheck,
  blocks: readonly string[] = [],
): BlockAttrs & { sub: RuleBlock[] } {
  const out: BlockAttrs & { sub: RuleBlock[] } = { policy: "", capabilities: [], sub: [] };
  const local = new KeyCheck();
  for (const item of block.body) {
    if (item.kind === "block") {
      if (blocks.includes(item.name)) out.sub.push(item);
      else keys.extra.push(item.name);
      continue;
    }
    local.once(item.name);
    if (item.name === "policy" && allowed.includes("policy")) out.policy = stringAttr(item.name, item.value);
    else if (item.name === "capabilities" && allowed.includes("capabilities")) {
      out.capabilities = listAttr(item.name, item.value);
    } else keys.extra.push(item.name);
  }
  keys.extra.push(...local.extra);
  return out;
}

function oneLabel(block: RuleBlock): string {
  if (block.labels.length > 1) throw fail(`${block.name}: expected one label, got ${block.labels.length}`);
  return block.labels[0] ?? "";
}

function validate(items: RuleItem[], raw: string): ParsedPolicy {
  const keys = new KeyCheck();
  const policy: ParsedPolicy = {
    Namespaces: [],
    NodePools: [],
    HostVolumes: [],
    Agent: null,
    Node: null,
    Operator: null,
    Quota: null,
    Plugin: null,
  };
  const levels = new Map<string, RuleBlock>();
  const byName = new Map<string, RuleBlock[]>([...labelledBlocks].map((name) => [name, []]));
  for (const item of items) {
    if (item.kind === "attribute" || !(byName.has(item.name) || levelBlockNames.has(item.name))) {
      keys.extra.push(item.name);
      continue;
    }
    const labelled = byName.get(item.name);
    if (labelled) {
      labelled.push(item);
      continue;
    }
    if (item.labels.length > 0) throw fail(`${item.name}: unexpected label ${goString(item.labels[0]!)}`);
    keys.once(item.name);
    levels.set(item.name, item);
  }
  if ([...byName.values()].every((blocks) => blocks.length === 0) && levels.size === 0) {
    throw new PolicyError(`Invalid policy: ${raw}`);
  }

  // Nomad's order: namespaces, node pools, host volumes, unknown keys, then the level blocks.
  for (const block of byName.get("namespace")!) policy.Namespaces.push(validateNamespace(block, keys));
  for (const block of byName.get("node_pool")!) policy.NodePools.push(validateNodePool(block, keys));
  for (const block of byName.get("host_volume")!) policy.HostVolumes.push(validateHostVolume(block, keys));
  const levelRules = new Map<string, string>();
  for (const [name, block] of levels) levelRules.set(name, readAttrs(block, ["policy"], keys).policy);
  if (keys.extra.length > 0) {
    throw new PolicyError(`Invalid or duplicate policy keys: ${keys.extra.join(", ")}`);
  }

  for (const name of levelBlocks) {
    const p = levelRules.get(name);
    if (p === undefined) continue;
    const allowed = name === "plugin" ? pluginPolicies : levelPolicies;
    const goType = `${name[0]!.toUpperCase()}${name.slice(1)}Policy`;
    if (!allowed.has(p)) {
      throw new PolicyError(`Invalid ${name} policy: &acl.${goType}{Policy:${goString(p)}}`);
    }
    const rule = { Policy: p };
    if (name === "agent") policy.Agent = rule;
    else if (name === "node") policy.Node = rule;
    else if (name === "operator") policy.Operator = rule;
    else if (name === "quota") policy.Quota = rule;
    else policy.Plugin = rule;
  }
  return policy;
}

function validateNamespace(block: RuleBlock, keys: KeyCheck): NamespaceRule {
  const name = oneLabel(block);
  const { policy, capabilities, sub } = readAttrs(block, ["policy", "capabilities"], keys, ["variables"]);
  const variablesRepr = sub.length > 0 ? "(*acl.VariablesPolicy)(…)" : "(*acl.VariablesPolicy)(nil)";
  const repr = `&acl.NamespacePolicy{Name:${goString(name)}, Policy:${goString(policy)}, Capabilities:${
    goList(capabilities)
  }, Variables:${variablesRepr}}`;
  if (!namePattern.test(name)) throw new PolicyError(`Invalid namespace name: ${repr}`);
  if (policy !== "" && !namespacePolicies.has(policy)) {
    throw new PolicyError(`Invalid namespace policy: ${repr}`);
  }
  for (const cap of capabilities) {
    if (!namespaceCapabilities.has(cap)) {
      throw new PolicyError(`Invalid namespace capability '${cap}': ${repr}`);
    }
  }
  if (sub.length > 1) keys.extra.push("variables");
  const rule: NamespaceRule = {
    Name: name,
    Policy: policy,
    Capabilities: expandNamespaceCapabilities(policy, capabilities),
    Variables: null,
  };
  const variables = sub[0];
  if (variables) {
    if (variables.labels.length > 0) {
      throw new PolicyError(`Invalid variable policy: no variable paths in namespace ${name}`);
    }
    const paths: VariablePathRule[] = [];
    for (const item of variables.body) {
      if (item.kind !== "block" || item.name !== "path") {
        keys.extra.push(item.name);
        continue;
      }
      const spec = oneLabel(item);
      const { capabilities: caps } = readAttrs(item, ["capabilities"], keys);
      if (spec === "") throw new PolicyError(`Invalid missing variable path in namespace ${name}`);
      if (spec.startsWith("/")) {
        throw new PolicyError(
          `Invalid variable path ${goString(spec)} in namespace ${name}: cannot start with a leading '/'`,
        );
      }
      for (const cap of caps) {
        if (!variableCapabilities.has(cap)) {
          throw new PolicyError(`Invalid variable capability '${cap}' in namespace ${name}`);
        }
      }
      paths.push({ PathSpec: spec, Capabilities: expandVariableCapabilities(caps) });
    }
    if (paths.length === 0) {
      throw new PolicyError(`Invalid variable policy: no variable paths in namespace ${name}`);
    }
    rule.Variables = { Paths: paths };
  }
  return rule;
}

function validateNodePool(block: RuleBlock, keys: KeyCheck): NamedRule {
  const name = oneLabel(block);
  const { policy, capabilities } = readAttrs(block, ["policy", "capabilities"], keys);
  if (!nodePoolNamePattern.test(name)) throw new PolicyError(`Invalid node pool name '${name}'`);
  if (policy !== "" && !levelPolicies.has(policy)) {
    throw new PolicyError(`Invalid node pool policy '${policy}' for '${name}'`);
  }
  for (const cap of capabilities) {
    if (!nodePoolCapabilities.has(cap)) {
      throw new PolicyError(`Invalid node pool capability '${cap}' for '${name}'`);
    }
  }
  return { Name: name, Policy: policy, Capabilities: expandNodePoolCapabilities(policy, capabilities) };
}

function validateHostVolume(block: RuleBlock, keys: KeyCheck): NamedRule {
  const name = oneLabel(block);
  const { policy, capabilities } = readAttrs(block, ["policy", "capabilities"], keys);
  const repr = `&acl.HostVolumePolicy{Name:${goString(name)}, Policy:${goString(policy)}, Capabilities:${
    goList(capabilities)
  }}`;
  if (!namePattern.test(name)) throw new PolicyError(`Invalid host volume name: ${repr}`);
  if (policy !== "" && !levelPolicies.has(policy)) {
    throw new PolicyError(`Invalid host volume policy: ${repr}`);
  }
  for (const cap of capabilities) {
    if (!hostVolumeCapabilities.has(cap)) {
      throw new PolicyError(`Invalid host volume capability '${cap}': ${repr}`);
    }
  }
  return { Name: name, Policy: policy, Capabilities: expandHostVolumeCapabilities(policy, capabilities) };
}
