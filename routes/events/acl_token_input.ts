// Validation of ACL token bodies (create and update) into the fields wharf stores.

import { ApiError } from "../../lib/errors.ts";
import { uuidPattern } from "../../lib/ids.ts";
import { bodyField } from "./acl_model.ts";
import { fieldTypeError, optionalBool, optionalString, optionalStrings } from "./acl_http.ts";
import { formatGoDuration, parseGoDuration } from "./duration.ts";

export interface TokenLimits {
  minTtlMs: number;
  maxTtlMs: number;
}

export interface TokenInput {
  accessorId: string | undefined;
  secretId: string | undefined;
  name: string;
  type: string;
  policies: string[];
  /** Role links as given (an ID, else a name), not yet resolved against stored roles. */
  roles: Array<{ id: string; name: string }>;
  global: boolean | undefined;
  /** Unix ms, when the body sets an expiry (from ExpirationTime or now + ExpirationTTL). */
  expiresAt: number | undefined;
  /** Go duration text of ExpirationTTL, "" when not given. */
  ttlText: string;
}

const struct = "ACLToken";
export const invalidToken = (reason: string) => new ApiError(400, `token 0 invalid: ${reason}`);

/** Decodes and validates a token body; `now` anchors TTLs and the expiry window. */
export function parseTokenInput(body: Record<string, unknown>, limits: TokenLimits, now: number): TokenInput {
  const accessorId = optionalString(struct, "AccessorID", bodyField(body, "AccessorID")) || undefined;
  const secretId = optionalString(struct, "SecretID", bodyField(body, "SecretID")) || undefined;
  const name = optionalString(struct, "Name", bodyField(body, "Name")) ?? "";
  const type = optionalString(struct, "Type", bodyField(body, "Type")) ?? "";
  const policies = optionalStrings(struct, "Policies", bodyField(body, "Policies")) ?? [];
  const roles = parseRoleLinks(bodyField(body, "Roles"));
  const global = optionalBool(struct, "Global", bodyField(body, "Global"));
  const rawTime = bodyField(body, "ExpirationTime");
  const rawTtl = bodyField(body, "ExpirationTTL");

  if (accessorId !== undefined && !uuidPattern.test(accessorId)) throw invalidToken("invalid AccessorID");
  if (secretId !== undefined && !uuidPattern.test(secretId)) throw invalidToken("invalid SecretID");
  if (name.length > 256) throw invalidToken("token name too long");
  if (type === "client") {
    if (policies.length === 0 && roles.length === 0) {
      throw invalidToken("client token missing policies or roles");
    }
  } else if (type === "management") {
    if (policies.length > 0 || roles.length > 0) {
      throw invalidToken("management token cannot be associated with policies or roles");
    }
  } else throw invalidToken("token type must be client or management");

  let ttlNs: number | undefined;
  if (rawTtl !== undefined && rawTtl !== null && rawTtl !== "" && rawTtl !== 0) {
    // A number is an int64 of nanoseconds: anything else does not fit Go's time.Duration.
    if (typeof rawTtl === "number" && Number.isInteger(rawTtl) && Math.abs(rawTtl) < 2 ** 63) ttlNs = rawTtl;
    else if (typeof rawTtl === "string") {
      ttlNs = parseGoDuration(rawTtl);
      if (ttlNs === undefined) {
        throw new ApiError(
          400,
          `Failed to decode request body: time: invalid duration ${JSON.stringify(rawTtl)}`,
        );
      }
    } else throw fieldTypeError(struct, "ExpirationTTL", rawTtl, "time.Duration");
  }
  let expiresAt: number | undefined;
  if (rawTime !== undefined && rawTime !== null) {
    if (typeof rawTime !== "string") throw fieldTypeError(struct, "ExpirationTime", rawTime, "time.Time");
    const t = Date.parse(rawTime);
    if (
      !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(rawTime) || Number.isNaN(t)
    ) {
      throw new ApiError(
        400,
        `Failed to decode request body: parsing time ${
          JSON.stringify(rawTime)
        } as "2006-01-02T15:04:05Z07:00": cannot parse`,
      );
    }
    expiresAt = t;
  }
  if (ttlNs !== undefined && expiresAt !== undefined) {
    throw invalidToken("cannot set both ExpirationTime and ExpirationTTL");
  }
  if (ttlNs !== undefined) {
    if (ttlNs < 0) throw invalidToken("token expiration TTL cannot be negative");
    expiresAt = now + Math.floor(ttlNs / 1e6);
  }
  if (expiresAt !== undefined) {
    if (expiresAt < now + limits.minTtlMs) {
      throw invalidToken(
        `expiration time cannot be less than ${formatGoDuration(limits.minTtlMs * 1e6)} in the future`,
      );
    }
    if (expiresAt > now + limits.maxTtlMs) {
      throw invalidToken(
        `expiration time cannot be more than ${formatGoDuration(limits.maxTtlMs * 1e6)} in the future`,
      );
    }
  }
  return {
    accessorId,
    secretId,
    name,
    type,
    policies,
    roles,
    global,
    expiresAt,
    ttlText: ttlNs !== undefined ? formatGoDuration(ttlNs) : "",
  };
}

/** The `Roles` member: [{ID, Name}] links, decoded as Go decodes []*ACLTokenRoleLink (null entries skipped). */
function parseRoleLinks(raw: unknown): Array<{ id: string; name: string }> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw fieldTypeError(struct, "Roles", raw, "[]*structs.ACLTokenRoleLink");
  const links: Array<{ id: string; name: string }> = [];
  for (const link of raw) {
    if (link === null) continue;
    if (typeof link !== "object" || Array.isArray(link)) {
      throw fieldTypeError(struct, "Roles", link, "structs.ACLTokenRoleLink");
    }
    const obj = link as Record<string, unknown>;
    links.push({
      id: optionalString("ACLTokenRoleLink", "ID", bodyField(obj, "ID")) ?? "",
      name: optionalString("ACLTokenRoleLink", "Name", bodyField(obj, "Name")) ?? "",
    });
  }
  return links;
}
