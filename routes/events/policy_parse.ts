// Parses and validates ACL policy rules as Nomad's `acl.Parse` does in strict mode (what its PUT runs): HCL
// or JSON (when the first non-space character is `{`) decoded into Nomad's policy structure, the same checks
// in the same order, the same reason texts, and capabilities expanded the same way (duplicates kept, an
// explicit empty list kept as an empty list). Nomad's Go code is the reference for behaviour; this is
// wharf's own implementation of it.

import { PolicyError } from "./policy_error.ts";
import {
  filterList,
  goBytesToText,
  GoPanic,
  LimitError,
  type Node,
  type ObjectItem,
  type ObjectList,
  PosError,
} from "./policy_ast.ts";
import { parseHcl } from "./policy_hcl.ts";
import { JsonSyntaxError, parseJsonRules } from "./policy_json.ts";
import { decodeRoot, type GoField, type GoType } from "./policy_decode.ts";
import {
  expandHostVolumePolicy,
  expandNamespacePolicy,
  expandNodePoolPolicy,
  expandOperatorPolicy,
  expandSentinelPolicy,
  expandVariableCapabilities,
  hostVolumeCapabilities,
  impliedCapabilities,
  namespaceCapabilities,
  nodePoolCapabilities,
  operatorCapabilities,
  pluginPolicies,
  policyLevels,
  sentinelCapabilities,
  variableCapabilities,
} from "./policy_capabilities.ts";

export interface VariablePathRule {
  PathSpec: string;
  Capabilities: string[] | null;
}

export interface NamespaceRule {
  Name: string;
  Policy: string;
  /** Expanded: explicit capabilities, then the policy's, then implied ones (duplicates kept). */
  Capabilities: string[] | null;
  Variables: { Paths: VariablePathRule[] | null } | null;
}

export interface NamedRule {
  Name: string;
  Policy: string;
  Capabilities: string[] | null;
}

export interface LevelRule {
  Policy: string;
}

export interface CapabilityRule {
  Policy: string;
  Capabilities: string[] | null;
}

/** A validated policy with capabilities expanded, shaped as Nomad's acl.Policy; plain JSON-safe data. */
export interface ParsedPolicy {
  Namespaces: NamespaceRule[] | null;
  NodePools: NamedRule[] | null;
  HostVolumes: NamedRule[] | null;
  Agent: LevelRule | null;
  Node: LevelRule | null;
  Operator: CapabilityRule | null;
  /** Nomad Enterprise's Sentinel rule: accepted and validated as Nomad does, not shown in RulesJSON. */
  Sentinel: CapabilityRule | null;
  Quota: LevelRule | null;
  Plugin: LevelRule | null;
}

// ---------------------------------------------------------------------------------------------------------
// Nomad's policy structure, for the decoder

const str: GoType = { kind: "string" };
const strs: GoType = { kind: "slice", elem: str };
const ptrTo = (fields: GoField[]): GoType => ({ kind: "ptr", elem: { kind: "struct", fields } });
const field = (name: string, tag: string, type: GoType): GoField => ({ name, tag, type });
const policyField = field("Policy", "", str);
const capsField = field("Capabilities", "", strs);

const variablesPath = ptrTo([field("PathSpec", ",key", str), capsField]);
const namespaceRule = ptrTo([
  field("Name", ",key", str),
  policyField,
  capsField,
  field("Variables", "variables", ptrTo([field("Paths", "path", { kind: "slice", elem: variablesPath })])),
]);
const namedRule = ptrTo([field("Name", ",key", str), policyField, capsField]);
const levelRule = ptrTo([policyField]);
const capabilityRule = ptrTo([policyField, capsField]);

const policyType: GoType = {
  kind: "struct",
  fields: [
    field("Namespaces", "namespace,expand", { kind: "slice", elem: namespaceRule }),
    field("NodePools", "node_pool,expand", { kind: "slice", elem: namedRule }),
    field("HostVolumes", "host_volume,expand", { kind: "slice", elem: namedRule }),
    field("Agent", "agent", levelRule),
    field("Node", "node", levelRule),
    field("Operator", "operator", capabilityRule),
    field("Sentinel", "sentinel", capabilityRule),
    field("Quota", "quota", levelRule),
    field("Plugin", "plugin", levelRule),
    field("Raw", "-", str),
    field("ExtraKeysHCL", ",unusedKeys", strs),
  ],
};

type Decoded = ParsedPolicy & { ExtraKeysHCL: string[] | null; removedKeys: Map<string, number> };

/**
 * Nomad removes one occurrence of a key from the unused-key list at a time (O(n²) on big policies). Removals
 * are counted instead and applied once: removing the first occurrence k times is removing the first k.
 */
function removeExtraKey(p: Decoded, key: string): void {
  p.removedKeys.set(key, (p.removedKeys.get(key) ?? 0) + 1);
}

function remainingExtraKeys(p: Decoded): string[] {
  const pending = new Map(p.removedKeys);
  return (p.ExtraKeysHCL ?? []).filter((key) => {
    const n = pending.get(key) ?? 0;
    if (n === 0) return true;
    pending.set(key, n - 1);
    return false;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Go-style formatting for reason texts (%q, %#v)

function isPrintable(ch: string): boolean {
  return ch === " " || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
}

/** Go's strconv.Quote. */
export function goQuote(s: string): string {
  const named: Record<number, string> = {
    7: "\\a",
    8: "\\b",
    12: "\\f",
    10: "\\n",
    13: "\\r",
    9: "\\t",
    11: "\\v",
  };
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xdc80 && cp <= 0xdcff) out += `\\x${(cp - 0xdc00).toString(16)}`; // a byte that is not UTF-8
    else if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (isPrintable(ch)) out += ch;
    else if (named[cp]) out += named[cp];
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}

function goStrings(values: readonly string[] | null): string {
  return values === null ? "[]string(nil)" : `[]string{${values.map(goQuote).join(", ")}}`;
}

function goNamespace(ns: NamespaceRule): string {
  const vars = ns.Variables === null ? "(*acl.VariablesPolicy)(nil)" : "(*acl.VariablesPolicy)(0xc000…)";
  return `&acl.NamespacePolicy{Name:${goQuote(ns.Name)}, Policy:${goQuote(ns.Policy)}, Capabilities:${
    goStrings(ns.Capabilities)
  }, Variables:${vars}}`;
}

function goHostVolume(hv: NamedRule): string {
  return `&acl.HostVolumePolicy{Name:${goQuote(hv.Name)}, Policy:${goQuote(hv.Policy)}, Capabilities:${
    goStrings(hv.Capabilities)
  }}`;
}

function goLevel(type: string, rule: LevelRule): string {
  return `&acl.${type}{Policy:${goQuote(rule.Policy)}}`;
}

function goCapabilityRule(type: string, rule: CapabilityRule): string {
  return `&acl.${type}{Policy:${goQuote(rule.Policy)}, Capabilities:${goStrings(rule.Capabilities)}}`;
}

// ---------------------------------------------------------------------------------------------------------

function invalid(reason: string): PolicyError {
  return new PolicyError(goBytesToText(reason));
}

/** The decoded policy with Go's stray bytes as U+FFFD, as Nomad's RulesJSON shows them. */
function textOnly<T>(value: T): T {
  if (typeof value === "string") return goBytesToText(value) as T;
  if (Array.isArray(value)) return value.map(textOnly) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, textOnly(v)])) as T;
  }
  return value;
}

/** Go's unicode.IsSpace. */
function isGoSpace(ch: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/.test(ch);
}

/** HCL picks its JSON parser when the first non-space character is `{`. */
export function isJsonRules(rules: string): boolean {
  for (const ch of rules) {
    if (isGoSpace(ch)) continue;
    return ch === "{";
  }
  return false;
}

function emptyPolicy(): ParsedPolicy {
  return {
    Namespaces: null,
    NodePools: null,
    HostVolumes: null,
    Agent: null,
    Node: null,
    Operator: null,
    Sentinel: null,
    Quota: null,
    Plugin: null,
  };
}

function syntaxTree(rules: string, json: boolean): ObjectList {
  return json ? parseJsonRules(rules) : parseHcl(rules);
}

function cloneNode(node: Node): Node {
  switch (node.kind) {
    case "list":
      return cloneList(node);
    case "item":
      return { kind: "item", keys: [...node.keys], val: cloneNode(node.val) };
    case "object":
      return { kind: "object", pos: node.pos, list: cloneList(node.list) };
    case "listtype":
      return { kind: "listtype", pos: node.pos, list: node.list.map(cloneNode) };
    case "literal":
      return node;
  }
}

function cloneList(list: ObjectList): ObjectList {
  return { kind: "list", items: list.items.map((item) => cloneNode(item) as ObjectItem) };
}

function indexOutOfRange(i: number, length: number): GoPanic {
  return new GoPanic(`runtime error: index out of range [${i}] with length ${length}`);
}

/** HCL decoding plus Nomad's corrections for blocks written without a label. */
function decodePolicy(rules: string): Decoded {
  const json = isJsonRules(rules);
  const tree = syntaxTree(rules, json);
  // Nomad parses the text a second time for the corrections below; a copy made before decoding (which
  // rewrites some items in place) is the same tree.
  const root = cloneList(tree);
  const p = decodeRoot(tree, policyType) as unknown as Decoded;
  p.removedKeys = new Map();
  // Blocks without a label get their name from the next key in HCL's decoder; Nomad finds them in the tree
  // and sets their name to "" so validation reports them, indexing the decoded lists by position.
  const namespaceAt = (i: number) => {
    const list = p.Namespaces ?? [];
    if (i >= list.length) throw indexOutOfRange(i, list.length);
    return list[i]!;
  };
  filterList(root, "namespace").items.forEach((nsObj, i) => {
    if (nsObj.keys.length === 0) namespaceAt(i).Name = "";
    if (i > 0) removeExtraKey(p, "namespace");
    if (nsObj.val.kind !== "object") return;
    const vars = filterList(nsObj.val.list, "variables").items;
    const varsObj = vars[0]?.val;
    if (varsObj?.kind !== "object") return;
    filterList(varsObj.list, "path").items.forEach((path, j) => {
      if (path.keys.length > 0) return;
      const variables = namespaceAt(i).Variables;
      if (variables === null) {
        throw new GoPanic("runtime error: invalid memory address or nil pointer dereference");
      }
      const paths = variables.Paths ?? [];
      if (j >= paths.length) throw indexOutOfRange(j, paths.length);
      paths[j]!.PathSpec = "";
    });
  });
  for (const block of ["node_pool", "host_volume"] as const) {
    const list = block === "node_pool" ? p.NodePools : p.HostVolumes;
    filterList(root, block).items.forEach((obj, i) => {
      if (obj.keys.length === 0) {
        if (i >= (list?.length ?? 0)) throw indexOutOfRange(i, list?.length ?? 0);
        list![i]!.Name = "";
      }
      if (i > 0) removeExtraKey(p, block);
    });
  }
  return p;
}

const validNamespace = /^[a-zA-Z0-9*-]{1,128}$/;
const validNodePool = /^[a-zA-Z0-9_*-]{1,128}$/;
const validVolume = /^[a-zA-Z0-9*-]{1,128}$/;

/** Parses and validates policy rules (strict, as a PUT); throws PolicyError only. */
export function parsePolicy(rules: string): ParsedPolicy {
  if (typeof rules !== "string") throw new PolicyError("Invalid policy: rules must be a string");
  if (rules === "") return emptyPolicy();
  // Go holds the text as UTF-8: a lone surrogate (possible in a JavaScript string) is U+FFFD there.
  rules = rules.replace(/\p{Cs}/gu, "\uFFFD");
  let p: Decoded;
  try {
    p = decodePolicy(rules);
  } catch (err) {
    if (err instanceof GoPanic) {
      throw invalid(`Failed to parse ACL Policy: invalid acl policy: ${err.message}`);
    }
    if (err instanceof PosError || err instanceof JsonSyntaxError || err instanceof LimitError) {
      throw invalid(`Failed to parse ACL Policy: ${err.message}`);
    }
    if (err instanceof RangeError) throw invalid("Failed to parse ACL Policy: nested too deeply");
    throw err;
  }
  if (
    !p.Namespaces?.length && !p.NodePools?.length && !p.HostVolumes?.length && !p.Agent && !p.Node &&
    !p.Operator && !p.Sentinel && !p.Quota && !p.Plugin
  ) {
    throw invalid(`Invalid policy: ${rules}`);
  }

  for (const ns of p.Namespaces ?? []) {
    if (!validNamespace.test(ns.Name)) throw invalid(`Invalid namespace name: ${goNamespace(ns)}`);
    if (ns.Policy !== "" && !policyLevels.has(ns.Policy)) {
      throw invalid(`Invalid namespace policy: ${goNamespace(ns)}`);
    }
    for (const cap of ns.Capabilities ?? []) {
      if (!namespaceCapabilities.has(cap)) {
        throw invalid(`Invalid namespace capability '${cap}': ${goNamespace(ns)}`);
      }
    }
    if (ns.Policy !== "") ns.Capabilities = [...(ns.Capabilities ?? []), ...expandNamespacePolicy(ns.Policy)];
    const implied = impliedCapabilities(ns.Capabilities ?? []);
    if (implied.length > 0) ns.Capabilities = [...(ns.Capabilities ?? []), ...implied];
    if (ns.Variables !== null) {
      if (!ns.Variables.Paths?.length) {
        throw invalid(`Invalid variable policy: no variable paths in namespace ${ns.Name}`);
      }
      for (const path of ns.Variables.Paths) {
        if (path.PathSpec === "") throw invalid(`Invalid missing variable path in namespace ${ns.Name}`);
        if (path.PathSpec.startsWith("/")) {
          throw invalid(
            `Invalid variable path ${
              goQuote(path.PathSpec)
            } in namespace ${ns.Name}: cannot start with a leading '/'\``,
          );
        }
        for (const cap of path.Capabilities ?? []) {
          if (!variableCapabilities.has(cap)) {
            throw invalid(`Invalid variable capability '${cap}' in namespace ${ns.Name}`);
          }
        }
        path.Capabilities = expandVariableCapabilities(path.Capabilities);
      }
    }
    removeExtraKey(p, ns.Name);
  }

  for (const np of p.NodePools ?? []) {
    if (!validNodePool.test(np.Name)) throw invalid(`Invalid node pool name '${np.Name}'`);
    if (np.Policy !== "" && !policyLevels.has(np.Policy)) {
      throw invalid(`Invalid node pool policy '${np.Policy}' for '${np.Name}'`);
    }
    for (const cap of np.Capabilities ?? []) {
      if (!nodePoolCapabilities.has(cap)) {
        throw invalid(`Invalid node pool capability '${cap}' for '${np.Name}'`);
      }
    }
    if (np.Policy !== "") np.Capabilities = appendCaps(np.Capabilities, expandNodePoolPolicy(np.Policy));
    removeExtraKey(p, np.Name);
  }

  for (const hv of p.HostVolumes ?? []) {
    if (!validVolume.test(hv.Name)) throw invalid(`Invalid host volume name: ${goHostVolume(hv)}`);
    if (hv.Policy !== "" && !policyLevels.has(hv.Policy)) {
      throw invalid(`Invalid host volume policy: ${goHostVolume(hv)}`);
    }
    for (const cap of hv.Capabilities ?? []) {
      if (!hostVolumeCapabilities.has(cap)) {
        throw invalid(`Invalid host volume capability '${cap}': ${goHostVolume(hv)}`);
      }
    }
    if (hv.Policy !== "") hv.Capabilities = appendCaps(hv.Capabilities, expandHostVolumePolicy(hv.Policy));
    removeExtraKey(p, hv.Name);
  }

  const extraKeys = remainingExtraKeys(p);
  if (extraKeys.length > 0) {
    throw invalid(`Invalid or duplicate policy keys: ${extraKeys.join(", ")}`);
  }

  if (p.Agent && !policyLevels.has(p.Agent.Policy)) {
    throw invalid(`Invalid agent policy: ${goLevel("AgentPolicy", p.Agent)}`);
  }
  if (p.Node && !policyLevels.has(p.Node.Policy)) {
    throw invalid(`Invalid node policy: ${goLevel("NodePolicy", p.Node)}`);
  }
  if (p.Operator) {
    const op = p.Operator;
    if (op.Policy !== "" && !policyLevels.has(op.Policy)) {
      throw invalid(`Invalid operator policy: ${goCapabilityRule("OperatorPolicy", op)}`);
    }
    for (const cap of op.Capabilities ?? []) {
      if (!operatorCapabilities.has(cap)) throw invalid(`Invalid operator capability '${cap}'`);
    }
    if (op.Policy !== "") op.Capabilities = appendCaps(op.Capabilities, expandOperatorPolicy(op.Policy));
  }
  if (p.Sentinel) {
    const s = p.Sentinel;
    if (s.Policy !== "" && !policyLevels.has(s.Policy)) {
      throw invalid(`Invalid sentinel policy: ${goCapabilityRule("SentinelPolicy", s)}`);
    }
    for (const cap of s.Capabilities ?? []) {
      if (!sentinelCapabilities.has(cap)) throw invalid(`Invalid sentinel capability '${cap}'`);
    }
    if (s.Policy !== "") s.Capabilities = appendCaps(s.Capabilities, expandSentinelPolicy(s.Policy));
  }
  if (p.Quota && !policyLevels.has(p.Quota.Policy)) {
    throw invalid(`Invalid quota policy: ${goLevel("QuotaPolicy", p.Quota)}`);
  }
  if (p.Plugin && !pluginPolicies.has(p.Plugin.Policy)) {
    throw invalid(`Invalid plugin policy: ${goLevel("PluginPolicy", p.Plugin)}`);
  }

  return textOnly({
    Namespaces: p.Namespaces,
    NodePools: p.NodePools,
    HostVolumes: p.HostVolumes,
    Agent: p.Agent,
    Node: p.Node,
    Operator: p.Operator,
    Sentinel: p.Sentinel,
    Quota: p.Quota,
    Plugin: p.Plugin,
  });
}

/** Go's append: appending nothing to a nil list leaves it nil. */
function appendCaps(caps: string[] | null, extra: readonly string[]): string[] | null {
  if (extra.length === 0) return caps;
  return [...(caps ?? []), ...extra];
}
