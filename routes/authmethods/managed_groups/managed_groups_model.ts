// A managed group's attributes (ldap `group_names`, oidc `filter`), its rendering, and the oidc
// filters evaluated at a login (docs/auth-methods.md#managed-groups).

import type { StoredDoc } from "../../../lib/store/mod.ts";
import type { FieldErrors } from "../errors.ts";
import { isObject, type ManagedGroupType, omitZero } from "../common.ts";
import { type Expr, FilterParseError, maxFilterLength, parseFilter } from "../lists/bexpr/parse.ts";
import { evaluateFilter } from "../lists/bexpr/eval.ts";
import type { AuthState, ManagedGroupDoc } from "../state.ts";
import { methodChildFields } from "../principals.ts";

/** Bounds of one group's names (docs/security.md#auth-methods). */
export const maxGroupNames = 256;
export const maxGroupNameLength = 1024;
/** Managed groups per auth method: an OIDC login evaluates every oidc group's filter of its method. */
export const maxGroupsPerMethod = 1000;

export const managedGroupActions = ["no-op", "read", "update", "delete"];

/**
 * Reads the type's attribute from `input` into `out`; problems go to `errors`. On create a missing attribute is
 * "required"; on update (only the masked keys are given) an empty one "cannot be empty".
 */
export function readGroupAttributes(
  type: ManagedGroupType,
  input: Record<string, unknown>,
  out: ManagedGroupDoc["attributes"],
  errors: FieldErrors,
  mode: "create" | "update",
): void {
  const field = type === "ldap" ? "group_names" : "filter";
  for (const k of Object.keys(input)) {
    if (k !== field) errors.add(`attributes.${k}`, "Unknown field.");
  }
  if (!(field in input)) return;
  const missing = mode === "create" ? "This field is required." : "Field cannot be empty.";
  const v = input[field];
  if (type === "oidc") {
    if (v === null || v === undefined || v === "") return errors.add("attributes.filter", missing);
    if (typeof v !== "string") return errors.add("attributes.filter", "Expected a string value.");
    const problem = filterProblem(v);
    if (problem) {
      return errors.add("attributes.filter", `Error evaluating submitted filter expression: ${problem}.`);
    }
    out.filter = v;
    return;
  }
  if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) {
    return errors.add("attributes.group_names", missing);
  }
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string" || n.trim() === "")) {
    return errors.add("attributes.group_names", "Must be a list of non-empty group names.");
  }
  if (v.length > maxGroupNames || v.some((n) => (n as string).length > maxGroupNameLength)) {
    return errors.add(
      "attributes.group_names",
      `At most ${maxGroupNames} names of at most ${maxGroupNameLength} characters each.`,
    );
  }
  out.group_names = [...new Set(v as string[])];
}

function filterProblem(filter: string): string | undefined {
  if (filter.length > maxFilterLength) return `longer than ${maxFilterLength} characters`;
  try {
    parseFilter(filter);
    return undefined;
  } catch (err) {
    if (err instanceof FilterParseError) return err.message;
    throw err;
  }
}

/** The create/update attribute check: the type's attribute must be present after the change. */
export function attributesObject(
  body: Record<string, unknown>,
  errors: FieldErrors,
): Record<string, unknown> {
  if (!("attributes" in body) || body.attributes === null) return {};
  if (!isObject(body.attributes)) {
    errors.add("attributes", "Expected an object.");
    return {};
  }
  return body.attributes;
}

export function renderManagedGroup(state: AuthState, s: StoredDoc<ManagedGroupDoc>): Record<string, unknown> {
  const d = s.doc;
  return omitZero({
    ...methodChildFields(state, s),
    attributes: d.type === "ldap"
      ? { group_names: d.attributes.group_names }
      : { filter: d.attributes.filter },
    member_ids: state.memberships.memberIds(s.id, d),
    authorized_actions: managedGroupActions,
  });
}

/** Parsed filters by their text (a group's filter is parsed once, not at every login). */
const parsedFilters = new Map<string, Expr | null>();
const maxParsedFilters = 4096;

function parsed(filter: string): Expr | null {
  let expr = parsedFilters.get(filter);
  if (expr === undefined) {
    try {
      expr = parseFilter(filter);
    } catch {
      expr = null;
    }
    if (parsedFilters.size >= maxParsedFilters) parsedFilters.delete(parsedFilters.keys().next().value!);
    parsedFilters.set(filter, expr);
  }
  return expr;
}

/**
 * The oidc managed groups of `methodId` whose filter matches a login's claims: `/token/<claim>` selects from
 * the ID token, `/userinfo/<claim>` from the userinfo answer (empty when the provider has none).
 */
export function matchingOidcGroups(
  state: AuthState,
  methodId: string,
  token: Record<string, unknown>,
  userinfo: Record<string, unknown>,
): string[] {
  const roots = { token, userinfo };
  const out: string[] = [];
  for (const id of state.memberships.groupIdsOfMethod(methodId)) {
    const group = state.managedGroup(id)?.doc;
    if (group?.type !== "oidc" || !group.attributes.filter) continue;
    const expr = parsed(group.attributes.filter);
    if (expr && evaluateFilter(expr, roots)) out.push(id);
  }
  return out.sort();
}
