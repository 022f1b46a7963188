// Merges a token's parsed policies into one ACL and answers capability questions
// (docs/events.md#acl-policies-for-stream-readers).

import type { Acl } from "./acl_types.ts";
import type { ParsedPolicy } from "./policy_parse.ts";

/** The node/agent/operator/quota/plugin levels, strongest last except deny, which beats everything. */
const levelRank: Record<string, number> = { list: 1, read: 2, write: 3, deny: 4 };

/** Merged namespace rules: name (exact or glob text) → capabilities (only "deny" if any policy denied). */
export type MergedNamespaces = Map<string, ReadonlySet<string>>;

export interface MergedPolicies {
  namespaces: MergedNamespaces;
  node: string;
  agent: string;
  operator: string;
  quota: string;
  plugin: string;
}

function strongerLevel(current: string, next: string | undefined): string {
  if (next === undefined) return current;
  return (levelRank[next] ?? 0) > (levelRank[current] ?? 0) ? next : current;
}

/** Union of capabilities per namespace name; deny anywhere leaves only deny. Levels: deny > write > read > list. */
export function mergePolicies(policies: readonly ParsedPolicy[]): MergedPolicies {
  const union = new Map<string, Set<string>>();
  const merged: MergedPolicies = {
    namespaces: union,
    node: "",
    agent: "",
    operator: "",
    quota: "",
    plugin: "",
  };
  for (const p of policies) {
    for (const ns of p.Namespaces ?? []) {
      let caps = union.get(ns.Name);
      if (!caps) union.set(ns.Name, caps = new Set());
      for (const cap of ns.Capabilities ?? []) caps.add(cap);
    }
    merged.node = strongerLevel(merged.node, p.Node?.Policy);
    merged.agent = strongerLevel(merged.agent, p.Agent?.Policy);
    merged.operator = strongerLevel(merged.operator, p.Operator?.Policy);
    merged.quota = strongerLevel(merged.quota, p.Quota?.Policy);
    merged.plugin = strongerLevel(merged.plugin, p.Plugin?.Policy);
  }
  for (const [name, caps] of union) if (caps.has("deny")) union.set(name, new Set(["deny"]));
  return merged;
}

/** Whether `glob` (with `*` = any run of characters, possibly empty) matches all of `value`. */
export function globMatches(glob: string, value: string): boolean {
  const parts = glob.split("*");
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (parts.length === 1) return glob === value;
  if (!value.startsWith(first) || value.length < first.length + last.length || !value.endsWith(last)) {
    return false;
  }
  let at = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = value.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}

/**
 * The rule that applies to namespace `ns`: an exact name beats every glob; otherwise the matching glob with
 * the smallest `len(ns) − len(glob) + count("*")`, ties to the bytewise-first glob. Undefined when none.
 */
export function lookupNamespace(rules: MergedNamespaces, ns: string): ReadonlySet<string> | undefined {
  const exact = rules.get(ns);
  if (exact) return exact;
  let best: { glob: string; distance: number; caps: ReadonlySet<string> } | undefined;
  for (const [glob, caps] of rules) {
    if (!glob.includes("*") || !globMatches(glob, ns)) continue;
    const distance = ns.length - glob.length + glob.split("*").length - 1;
    if (!best || distance < best.distance || (distance === best.distance && bytewiseLess(glob, best.glob))) {
      best = { glob, distance, caps };
    }
  }
  return best?.caps;
}

function bytewiseLess(a: string, b: string): boolean {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
    if (ea[i] !== eb[i]) return ea[i]! < eb[i]!;
  }
  return ea.length < eb.length;
}

function grants(caps: ReadonlySet<string> | undefined, capability: string): boolean {
  return caps !== undefined && !caps.has("deny") && caps.has(capability);
}

/** An Acl that gives the same answer, `allowed`, to every question. */
function uniformAcl(allowed: boolean): Acl {
  return Object.freeze({
    management: allowed,
    allowNamespace: () => allowed,
    allowAllNamespaces: () => allowed,
    allowNodeRead: () => allowed,
    allowNodeWrite: () => allowed,
  });
}

/** Everything allowed: management tokens, and every caller when ACLs are disabled. */
export const allowAllAcl: Acl = uniformAcl(true);

/** Nothing allowed: a client token none of whose policies exists any more. */
export const denyAllAcl: Acl = uniformAcl(false);

/** Compiles a token's policies (unknown policy names already dropped by the caller) into an Acl. */
export function compileAcl(policies: readonly ParsedPolicy[], options: { management?: boolean } = {}): Acl {
  if (options.management) return allowAllAcl;
  const merged = mergePolicies(policies);
  const rules = merged.namespaces;
  return Object.freeze({
    management: false,
    allowNamespace: (ns: string, capability: string) => grants(lookupNamespace(rules, ns), capability),
    allowAllNamespaces: (capability: string) => {
      if (!grants(rules.get("*"), capability)) return false;
      for (const caps of rules.values()) if (!grants(caps, capability)) return false;
      return true;
    },
    allowNodeRead: () => merged.node === "read" || merged.node === "write",
    allowNodeWrite: () => merged.node === "write",
  });
}
