// From verified claims to a token's rights, as Nomad's binder does (docs/events.md#sso-login): claim mappings
// into `value.*`/`list.*`, binding rule selectors (bexpr), `${…}` bind names and the token name format.

import { ApiError } from "../../lib/errors.ts";
import { evaluateFilter } from "../../lib/bexpr/eval.ts";
import type { StoredAuthMethod, StoredBindingRule } from "./acl_sso_model.ts";
import type { ParsedSelector } from "./acl_sso_selectors.ts";
import { aclObjectName } from "./acl_names.ts";

/** The mapped claims a selector sees: `value.<name>` strings and `list.<name>` string lists. */
export interface MappedClaims {
  value: Record<string, string>;
  list: Record<string, string[]>;
}

/** What the matching rules grant: management, or policies and role names (each existing at login time). */
export interface Bindings {
  management: boolean;
  policies: string[];
  roles: string[];
}

/** What the binder looks up: whether a policy or a role of that name exists now; a rule's parsed selector. */
export interface BindTargets {
  policyExists(name: string): boolean;
  roleExists(name: string): boolean;
  selectorOf(rule: StoredBindingRule): ParsedSelector;
}

/** A claim by name, or by JSON pointer when the name starts with "/" (a missing step is no claim). */
function claimAt(all: Record<string, unknown>, name: string): unknown {
  if (!name.startsWith("/")) return Object.hasOwn(all, name) ? all[name] : undefined;
  let cur: unknown = all;
  for (const raw of name.slice(1).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(part)) return undefined;
      cur = cur[Number(part)];
    } else if (typeof cur === "object" && cur !== null) {
      cur = Object.hasOwn(cur, part) ? (cur as Record<string, unknown>)[part] : undefined;
    } else return undefined;
  }
  return cur;
}

/** A claim value as Nomad turns it into a string: numbers truncated to integers, lists as JSON. */
function stringify(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") return Number.isFinite(v) ? BigInt(Math.trunc(v)).toString() : undefined;
  if (Array.isArray(v)) return JSON.stringify(v);
  return undefined;
}

function goType(v: unknown): string {
  if (Array.isArray(v)) return "[]interface {}";
  if (typeof v === "object" && v !== null) return "map[string]interface {}";
  return typeof v;
}

/** Nomad's SelectorData: the method's ClaimMappings and ListClaimMappings applied to the claims. */
export function mapClaims(method: StoredAuthMethod, claims: Record<string, unknown>): MappedClaims {
  const value: Record<string, string> = {};
  for (const [source, target] of Object.entries(method.Config.ClaimMappings ?? {})) {
    const raw = claimAt(claims, source);
    if (raw === undefined || raw === null) continue;
    const s = stringify(raw);
    if (s === undefined) {
      throw new ApiError(
        400,
        `error converting claim '${source}' to string from unknown type ${goType(raw)}`,
      );
    }
    value[target] = s;
  }
  const list: Record<string, string[]> = {};
  for (const [source, target] of Object.entries(method.Config.ListClaimMappings ?? {})) {
    const raw = claimAt(claims, source);
    if (raw === undefined || raw === null) continue;
    if (typeof raw === "object" && !Array.isArray(raw)) {
      throw new ApiError(400, `${JSON.stringify(source)} list claim could not be converted to string list`);
    }
    const items = Array.isArray(raw) ? raw : [raw];
    const out: string[] = [];
    for (const item of items) {
      const s = stringify(item);
      if (s === undefined) {
        throw new ApiError(
          400,
          `value ${JSON.stringify(item)} in ${
            JSON.stringify(source)
          } list claim could not be parsed as string`,
        );
      }
      if (s !== "") out.push(s);
    }
    list[target] = out;
  }
  return { value, list };
}

/**
 * `${name}` interpolation as Nomad's InterpolateHIL uses it: each `${…}` names a variable (`$${` is a literal
 * `${`); an unknown name is an error. Only variable references are supported, not HIL's functions.
 */
export function interpolate(template: string, vars: Record<string, string>, lowercase: boolean): string {
  if (!template.includes("${")) return template;
  let out = "";
  let i = 0;
  while (i < template.length) {
    if (template.startsWith("$${", i)) {
      out += "${";
      i += 3;
    } else if (template.startsWith("${", i)) {
      const end = template.indexOf("}", i + 2);
      if (end < 0) throw new Error(`unterminated interpolation at ${i}`);
      const name = template.slice(i + 2, end).trim();
      if (!/^[A-Za-z_][A-Za-z0-9_.\-]*$/.test(name)) throw new Error(`unsupported interpolation "${name}"`);
      if (!Object.hasOwn(vars, name)) throw new Error(`unknown variable accessed: ${name}`);
      out += lowercase ? vars[name]!.toLowerCase() : vars[name]!;
      i = end + 1;
    } else {
      out += template[i];
      i++;
    }
  }
  return out;
}

/** The `value.*` variables a bind name may use: every mapped claim, "" for a mapping the claims lacked. */
function bindVariables(method: StoredAuthMethod, claims: MappedClaims): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const target of Object.values(method.Config.ClaimMappings ?? {})) vars[`value.${target}`] = "";
  for (const [k, v] of Object.entries(claims.value)) vars[`value.${k}`] = v;
  return vars;
}

/** A selector as Nomad's binder evaluates it: "" matches all, a parse or evaluation error matches nothing. */
function selectorMatches(selector: ParsedSelector, claims: MappedClaims): boolean {
  if (selector === "all") return true;
  if (selector === "none") return false;
  try {
    return evaluateFilter(selector, { value: claims.value, list: claims.list });
  } catch {
    return false;
  }
}

/** Nomad's Binder.Bind: the rules of `method` whose selector matches, turned into bindings. */
export function bind(
  method: StoredAuthMethod,
  rules: readonly StoredBindingRule[],
  claims: MappedClaims,
  targets: BindTargets,
): Bindings {
  const bindings: Bindings = { management: false, policies: [], roles: [] };
  const vars = bindVariables(method, claims);
  for (const rule of rules.filter((r) => selectorMatches(targets.selectorOf(r), claims))) {
    let name: string;
    try {
      name = interpolate(rule.BindName, vars, true);
    } catch (err) {
      throw new ApiError(
        400,
        `cannot compute ${JSON.stringify(rule.BindType)} bind name for bind target: ${
          (err as Error).message
        }`,
      );
    }
    if (rule.BindType !== "management" && !aclObjectName.test(name)) {
      throw new ApiError(
        400,
        `computed ${JSON.stringify(rule.BindType)} bind name for bind target is invalid: ${
          JSON.stringify(name)
        }`,
      );
    }
    if (rule.BindType === "management") return { management: true, policies: [], roles: [] };
    if (rule.BindType === "policy" && targets.policyExists(name) && !bindings.policies.includes(name)) {
      bindings.policies.push(name);
    }
    if (rule.BindType === "role" && targets.roleExists(name) && !bindings.roles.includes(name)) {
      bindings.roles.push(name);
    }
  }
  return bindings;
}

/** The login token's name from the method's TokenNameFormat (claim values as given, not lowercased). */
export function tokenName(method: StoredAuthMethod, claims: MappedClaims): string {
  const vars: Record<string, string> = {
    auth_method_type: method.Type,
    auth_method_name: method.Name,
  };
  for (const [k, v] of Object.entries(claims.value)) vars[`value.${k}`] = v;
  try {
    return interpolate(method.TokenNameFormat, vars, false);
  } catch (err) {
    throw new ApiError(400, `failed to generate ACL token name: ${(err as Error).message}`);
  }
}
