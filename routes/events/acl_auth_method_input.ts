// Decoding and validation of ACL auth method bodies into what wharf stores, with Nomad's error texts
// (docs/events.md#sso-login).

import { ApiError } from "../../lib/errors.ts";
import { bodyField } from "./acl_model.ts";
import type { AuthMethodConfigFields } from "./acl_sso_model.ts";
import { aclObjectName } from "./acl_names.ts";
import { fieldTypeError, jsonKind, optionalBool, optionalString, optionalStrings } from "./acl_http.ts";
import { formatGoDuration, parseGoDuration } from "./duration.ts";

const struct = "ACLAuthMethod";
const configStruct = "ACLAuthMethodConfig";
export const defaultTokenNameFormat = "${auth_method_type}-${auth_method_name}";

/** Bounds on what one auth method may hold (anything larger is refused, not stored). */
export const authMethodLimits = { listItems: 64, itemBytes: 16_384, mapEntries: 64 };

/** The config as decoded: the client secret in plaintext (sealed before storing). */
export interface AuthMethodConfigInput extends AuthMethodConfigFields {
  OIDCClientSecret: string;
}

export interface AuthMethodInput {
  name: string;
  type: string;
  tokenLocality: string;
  tokenNameFormat: string;
  maxTokenTtlNs: number;
  isDefault: boolean;
  /** undefined when the body has no Config (an update then keeps the stored one, as Nomad merges). */
  config: AuthMethodConfigInput | undefined;
}

/** Nomad's multierror text: one error as "1 error occurred:\n\t* …\n\n". */
export function multiError(errors: string[]): string {
  const n = errors.length;
  return `${n} error${n === 1 ? "" : "s"} occurred:\n${errors.map((e) => `\t* ${e}`).join("\n")}\n\n`;
}

/** helper.FlattenMultierror: a single error stands alone. */
function flattened(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : multiError(errors);
}

function decodeError(message: string): ApiError {
  return new ApiError(400, `Failed to decode request body: ${message}`);
}

/** A Go duration from a string or a number of ns (undefined for other types); a bad string is a decode error. */
function durationNs(v: unknown): number | undefined {
  if (typeof v === "string") {
    const ns = parseGoDuration(v);
    if (ns === undefined) throw decodeError(`time: invalid duration ${JSON.stringify(v)}`);
    return ns;
  }
  if (typeof v === "number" && Number.isFinite(v) && Math.abs(v) < 2 ** 63) return Math.trunc(v);
  return undefined;
}

/** MaxTokenTTL as Nomad's UnmarshalJSON reads it: other types than a string or a number are ignored. */
function maxTokenTtl(v: unknown): number {
  return durationNs(v) ?? 0;
}

/** A leeway: "" or absent is zero; other types than a string or a number are refused. */
function leeway(field: string, v: unknown): number {
  if (v === undefined || v === null || v === "") return 0;
  const ns = durationNs(v);
  if (ns === undefined) throw decodeError(`unexpected ${field} type: ${JSON.stringify(v)}`);
  return ns;
}

function boundedStrings(field: string, v: unknown): string[] | null {
  const list = optionalStrings(configStruct, field, v);
  if (list === undefined) return null;
  if (list.length > authMethodLimits.listItems) {
    throw new ApiError(400, `${field} has more than ${authMethodLimits.listItems} entries`);
  }
  for (const s of list) {
    if (s.length > authMethodLimits.itemBytes) {
      throw new ApiError(400, `an entry of ${field} is longer than ${authMethodLimits.itemBytes}`);
    }
  }
  return list;
}

function boundedString(field: string, v: unknown): string {
  const s = optionalString(configStruct, field, v) ?? "";
  if (s.length > authMethodLimits.itemBytes) {
    throw new ApiError(400, `${field} is longer than ${authMethodLimits.itemBytes}`);
  }
  return s;
}

function stringMap(field: string, v: unknown): Record<string, string> | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw fieldTypeError(configStruct, field, v, "map[string]string");
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > authMethodLimits.mapEntries) {
    throw new ApiError(400, `${field} has more than ${authMethodLimits.mapEntries} entries`);
  }
  const out: Record<string, string> = {};
  for (const [k, val] of entries) {
    if (typeof val !== "string") {
      throw decodeError(
        `json: cannot unmarshal ${
          jsonKind(val)
        } into Go struct field ${configStruct}.${field} of type string`,
      );
    }
    if (k.length > 1024 || val.length > 1024) throw new ApiError(400, `an entry of ${field} is too long`);
    // A plain object cannot hold these as data (assigning "__proto__" would touch its prototype).
    if (k === "__proto__" || val === "__proto__") throw new ApiError(400, `${field} cannot map "__proto__"`);
    out[k] = val;
  }
  return out;
}

/** The Config fields wharf reads, by kind (a duration is stored as `<name>Ns`). */
const configFields: Record<string, "string" | "strings" | "bool" | "map" | "duration"> = {
  JWTValidationPubKeys: "strings",
  JWKSURL: "string",
  OIDCDiscoveryURL: "string",
  OIDCClientID: "string",
  OIDCClientSecret: "string",
  OIDCEnablePKCE: "bool",
  OIDCDisableUserInfo: "bool",
  OIDCScopes: "strings",
  BoundAudiences: "strings",
  BoundIssuer: "strings",
  AllowedRedirectURIs: "strings",
  DiscoveryCaPem: "strings",
  JWKSCACert: "string",
  SigningAlgs: "strings",
  ExpirationLeeway: "duration",
  NotBeforeLeeway: "duration",
  ClockSkewLeeway: "duration",
  ClaimMappings: "map",
  ListClaimMappings: "map",
  VerboseLogging: "bool",
};

function parseConfig(raw: unknown): AuthMethodConfigInput | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw fieldTypeError(struct, "Config", raw, "structs.ACLAuthMethodConfig");
  }
  const c = raw as Record<string, unknown>;
  const f = (name: string) => bodyField(c, name);
  const assertion = f("OIDCClientAssertion");
  if (assertion !== undefined && assertion !== null) {
    throw new ApiError(400, "OIDCClientAssertion is not supported by wharf (docs/events.md#sso-login)");
  }
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(configFields)) {
    const v = f(name);
    if (kind === "string") out[name] = boundedString(name, v);
    else if (kind === "strings") out[name] = boundedStrings(name, v);
    else if (kind === "bool") out[name] = optionalBool(configStruct, name, v) ?? false;
    else if (kind === "map") out[name] = stringMap(name, v);
    else out[`${name}Ns`] = leeway(name, v);
  }
  return out as unknown as AuthMethodConfigInput;
}

/** Decodes an auth method body (types only; validation comes after the merge with the stored method). */
export function decodeAuthMethod(body: Record<string, unknown>): AuthMethodInput {
  return {
    name: optionalString(struct, "Name", bodyField(body, "Name")) ?? "",
    type: optionalString(struct, "Type", bodyField(body, "Type")) ?? "",
    tokenLocality: optionalString(struct, "TokenLocality", bodyField(body, "TokenLocality")) ?? "",
    tokenNameFormat: optionalString(struct, "TokenNameFormat", bodyField(body, "TokenNameFormat")) ?? "",
    maxTokenTtlNs: maxTokenTtl(bodyField(body, "MaxTokenTTL")),
    isDefault: optionalBool(struct, "Default", bodyField(body, "Default")) ?? false,
    config: parseConfig(bodyField(body, "Config")),
  };
}

/** Nomad's ACLAuthMethod.Validate on the merged method; the reasons in Nomad's order, [] when valid. */
export function authMethodProblems(m: AuthMethodInput, minTtlNs: number, maxTtlNs: number): string[] {
  const errors: string[] = [];
  if (!aclObjectName.test(m.name)) errors.push(`invalid name '${m.name}'`);
  if (m.tokenLocality !== "local" && m.tokenLocality !== "global") {
    errors.push(`invalid token locality '${m.tokenLocality}'`);
  }
  if (m.type !== "OIDC" && m.type !== "JWT") errors.push(`invalid token type '${m.type}'`);
  const configErrors: string[] = [];
  const c = m.config;
  if (!c) configErrors.push("missing auth method Config");
  else if (m.type === "OIDC") {
    if (c.OIDCDiscoveryURL === "") configErrors.push("missing OIDCDiscoveryURL");
    if (c.OIDCClientID === "") configErrors.push("missing OIDCClientID");
  } else if (m.type === "JWT") {
    if (c.OIDCDiscoveryURL === "" && c.JWKSURL === "" && !c.JWTValidationPubKeys?.length) {
      configErrors.push(
        "JWT auth method requires either OIDCDiscoveryURL, or JWKS URL, or JWTValidationPubKeys set",
      );
    }
  }
  if (configErrors.length) errors.push(`invalid config: ${flattened(configErrors)}`);
  if (minTtlNs > m.maxTokenTtlNs || m.maxTokenTtlNs > maxTtlNs) {
    errors.push(
      `invalid MaxTokenTTL value '${formatGoDuration(m.maxTokenTtlNs)}' (should be between ${
        formatGoDuration(minTtlNs)
      } and ${formatGoDuration(maxTtlNs)})`,
    );
  }
  return errors;
}
