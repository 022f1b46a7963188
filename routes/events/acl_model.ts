// Stored shapes of ACL tokens and policies, and their wire renderings in Nomad's key order.

import { createHash } from "node:crypto";

export const tokenCollection = "cluster/acl_tokens";
export const policyCollection = "cluster/acl_policies";
export const metaCollection = "cluster/acl_meta";

/** A token's link to a role as rendered: the immutable ID and the role's current name. */
export interface RoleLink {
  ID: string;
  Name: string;
}

/** A token as stored: the rendered fields plus an HMAC of the secret (lookup) and a sealed copy (reads). */
export interface StoredToken {
  AccessorID: string;
  Name: string;
  Type: "client" | "management";
  Policies: string[] | null;
  /** IDs of linked roles (docs/events.md#acl-roles); the names are looked up when rendered. */
  Roles?: string[] | null;
  Global: boolean;
  Hash: string;
  CreateTime: string;
  ExpirationTime: string | null;
  ExpirationTTL: string;
  CreateIndex: number;
  ModifyIndex: number;
  SecretHmac: string;
  SecretSealed: string;
}

export interface StoredPolicy {
  Name: string;
  Description: string;
  Rules: string;
  JobACL: unknown;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The fields a token and its list stub share, from Name to ExpirationTime, in Nomad's order. */
function tokenCommonFields(t: StoredToken, roles: RoleLink[] | null): Record<string, unknown> {
  return {
    Name: t.Name,
    Type: t.Type,
    Policies: t.Policies,
    Roles: roles,
    Global: t.Global,
    Hash: t.Hash,
    CreateTime: t.CreateTime,
    ExpirationTime: t.ExpirationTime,
  };
}

/** `roles`: the token's links to roles that still exist (AclState.roleLinks), null when it never had any. */
export function renderToken(
  t: StoredToken,
  secretId: string,
  roles: RoleLink[] | null,
): Record<string, unknown> {
  return {
    AccessorID: t.AccessorID,
    SecretID: secretId,
    ...tokenCommonFields(t, roles),
    ExpirationTTL: t.ExpirationTTL,
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

export function renderTokenStub(t: StoredToken, roles: RoleLink[] | null): Record<string, unknown> {
  return {
    AccessorID: t.AccessorID,
    ...tokenCommonFields(t, roles),
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

export function renderPolicy(p: StoredPolicy, rulesJson: unknown): Record<string, unknown> {
  return {
    Name: p.Name,
    Description: p.Description,
    Rules: p.Rules,
    RulesJSON: rulesJson,
    JobACL: p.JobACL ?? null,
    Hash: p.Hash,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

export function renderPolicyStub(p: StoredPolicy): Record<string, unknown> {
  return {
    Name: p.Name,
    Description: p.Description,
    JobACL: p.JobACL ?? null,
    Hash: p.Hash,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

/** Base64 SHA-256 over the canonical mutable fields: opaque, changes when they change. */
export function contentHash(fields: unknown[]): string {
  return createHash("sha256").update(JSON.stringify(fields)).digest("base64");
}

/** Looks a body key up case-insensitively (Nomad decodes JSON that way). */
export function bodyField(body: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(body, name)) return body[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(body)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** RFC 3339 UTC with the precision JavaScript has (ms). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}
