// Turns JSON policy rules (plain object form, or HCL-JSON's arrays of objects) into the same item tree as HCL.

import { PolicyError } from "./policy_error.ts";
import type { RuleItem } from "./policy_hcl.ts";

/** How many labels each known block takes, by the path of block names leading to it. */
const labelCounts: ReadonlyMap<string, number> = new Map([
  ["namespace", 1],
  ["node_pool", 1],
  ["host_volume", 1],
  ["node", 0],
  ["agent", 0],
  ["operator", 0],
  ["quota", 0],
  ["plugin", 0],
  ["namespace/variables", 0],
  ["namespace/variables/path", 1],
]);

function fail(reason: string): PolicyError {
  return new PolicyError(`Failed to parse ACL Policy: ${reason}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parses JSON rules; throws PolicyError on malformed JSON or shapes no policy can have. */
export function parseJsonRules(source: string): RuleItem[] {
  let root: unknown;
  try {
    root = JSON.parse(source);
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!isObject(root)) throw fail("the policy must be a JSON object");
  return bodyItems(root, "", 0);
}

function bodyItems(body: Record<string, unknown>, path: string, depth: number): RuleItem[] {
  if (depth > 16) throw fail("objects nested too deeply");
  const items: RuleItem[] = [];
  for (const [key, value] of Object.entries(body)) {
    const blockPath = (path ? `${path}/${key}` : key).toLowerCase();
    const labels = labelCounts.get(blockPath);
    if (typeof value === "string") {
      items.push({ kind: "attribute", name: key, value });
    } else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
      if (labels !== undefined && value.length > 0) {
        throw fail(`${key}: expected an object, got a list of strings`);
      }
      items.push({ kind: "attribute", name: key, value: value as string[] });
    } else if (isObject(value) || Array.isArray(value)) {
      for (const part of Array.isArray(value) ? value : [value]) {
        if (!isObject(part)) throw fail(`${key}: expected an object`);
        items.push(...blockItems(key, part, labels ?? 0, blockPath, depth + 1));
      }
    } else {
      throw fail(`${key}: expected a string, a list of strings or an object, got ${JSON.stringify(value)}`);
    }
  }
  return items;
}

function blockItems(
  name: string,
  value: Record<string, unknown>,
  labels: number,
  path: string,
  depth: number,
): RuleItem[] {
  if (labels === 0) return [{ kind: "block", name, labels: [], body: bodyItems(value, path, depth) }];
  const items: RuleItem[] = [];
  for (const [label, inner] of Object.entries(value)) {
    for (const part of Array.isArray(inner) ? inner : [inner]) {
      if (!isObject(part)) throw fail(`${name} ${JSON.stringify(label)}: expected an object`);
      items.push({ kind: "block", name, labels: [label], body: bodyItems(part, path, depth + 1) });
    }
  }
  return items;
}
