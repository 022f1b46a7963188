// Small shared pieces of the auth family: id formats, the strictly increasing clock, JSON type guards.

import type { EventInput } from "../../lib/store/mod.ts";
import { fieldError } from "./errors.ts";

export type MethodType = "password" | "oidc" | "ldap";
export const methodTypes: readonly MethodType[] = ["password", "oidc", "ldap"];
export const methodPrefix: Record<MethodType, string> = { password: "ampw", oidc: "amoidc", ldap: "amldap" };
export const accountPrefix: Record<MethodType, string> = {
  password: "acctpw",
  oidc: "acctoidc",
  ldap: "acctldap",
};

export const collections = {
  scopes: "auth/scopes",
  methods: "auth/methods",
  accounts: "auth/accounts",
  users: "auth/users",
  tokens: "auth/tokens",
  tombstones: "auth/tombstones",
  managedGroups: "auth/managed-groups",
} as const;

/** The method types that have managed groups, and their groups' id prefixes. */
export type ManagedGroupType = "oidc" | "ldap";
export const managedGroupPrefix: Record<ManagedGroupType, string> = { oidc: "mgoidc", ldap: "mgldap" };

/**
 * Lock keys of invariants that span documents. Every write that can remove an admin takes `admins` (the
 * last-admin rule reads all users); a child's create and its parent's delete share the parent's key, so a
 * child is never committed under a parent that is being deleted.
 */
export const lockKeys = {
  admins: "auth/admins",
  scope: (id: string) => `auth/scope/${id}`,
  method: (id: string) => `${collections.methods}/${id}`,
  token: (id: string) => `${collections.tokens}/${id}`,
} as const;

/**
 * Keys a commit that adds or removes tokens (or accounts) under methods takes SHARED: their method's and scope's.
 * A method or org delete holds them exclusively, so its cascade sees every such commit settled and none starts
 * under it; logins and token deletes still run side by side.
 */
export function parentLocks(refs: Iterable<{ auth_method_id: string; scope_id: string }>): string[] {
  const keys = new Set<string>();
  for (const r of refs) keys.add(lockKeys.method(r.auth_method_id)).add(lockKeys.scope(r.scope_id));
  return [...keys];
}

/** Checks a path id against its allowed prefixes: 400 `id` when it is not of the form prefix_[A-Za-z0-9]+. */
export function assertIdFormat(id: string, prefixes: readonly string[], field = "id"): void {
  const m = /^([a-z]+)_[A-Za-z0-9]+$/.exec(id);
  if (!m || !prefixes.includes(m[1]!) || id.length > 64) {
    throw fieldError({ name: field, description: "Incorrectly formatted identifier." });
  }
}

export function methodTypeOfId(id: string): MethodType | undefined {
  const prefix = id.slice(0, id.indexOf("_"));
  return methodTypes.find((t) => methodPrefix[t] === prefix);
}

let lastMs = 0;
/** RFC 3339 UTC with milliseconds; never returns the same or an earlier instant twice in this process. */
export function nowIso(): string {
  return new Date(nowMs()).toISOString();
}

/** The instant nowIso would render, as epoch milliseconds (callers that also need arithmetic on it). */
export function nowMs(): number {
  let ms = Date.now();
  if (ms <= lastMs) ms = lastMs + 1;
  lastMs = ms;
  return ms;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Rejects C0/C1 control characters in names and descriptions. */
export function hasControlChars(s: string): boolean {
  // deno-lint-ignore no-control-regex
  return /[\u0000-\u001f\u007f-\u009f]/.test(s);
}

/** Drops keys whose value is a zero value, as Boundary's JSON rendering does. */
export function omitZero(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v === undefined || v === null || v === false || v === 0 || v === "") continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (isObject(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out;
}

/** An auth method's attributes object (methods/attrs_*.ts read and write it; state.ts stores it). */
export type Attrs = Record<string, unknown>;

/**
 * A change to one of the family's resources on the event stream: topic and payload member `topic`, keyed by the
 * resource id, with the resource's `fields` and the acting user's id ("" when none), then `extra`.
 */
export function resourceEvent(
  topic: string,
  type: string,
  fields: { id: string } & Record<string, unknown>,
  actor: { kind: string; userId?: string },
  extra: Record<string, unknown> = {},
): EventInput {
  const actorUserId = actor.kind === "user" ? actor.userId ?? "" : "";
  return {
    Topic: topic,
    Type: type,
    Key: fields.id,
    Payload: { [topic]: { ...fields, actor_user_id: actorUserId, ...extra } },
  };
}
