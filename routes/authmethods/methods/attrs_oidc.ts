// Attributes of an OIDC auth method: validation, clearing rules, completeness and rendering
// (docs/auth-methods.md#oidc).

import { canonicalHttpUrl, hasControlOrSpace } from "../../../lib/urls.ts";
import {
  type AttrInput,
  type AttrOutcome,
  type Attrs,
  parseClaimMaps,
  parseHttpUrl,
  path,
  readBool,
  readString,
  readStringList,
  readUint32,
  rejectUnknown,
  validCertificates,
} from "./attrs_common.ts";
import { omitZero } from "../common.ts";
import type { FieldErrors } from "../errors.ts";
import { jwsAlgorithms } from "../../../lib/jws_algorithms.ts";

export const oidcStates = ["inactive", "active-private", "active-public"] as const;
const supportedPrompts = ["none", "login", "consent", "select_account"];
/** The OIDC attributes that hold lists of strings. */
export const oidcListFields = [
  "signing_algorithms",
  "idp_ca_certs",
  "allowed_audiences",
  "claims_scopes",
  "account_claim_maps",
  "prompts",
] as const;
const known = new Set([
  "issuer",
  "client_id",
  "client_secret",
  "max_age",
  "api_url_prefix",
  "disable_discovered_config_validation",
  ...oidcListFields,
]);
const readOnly = new Set(["state", "callback_url", "client_secret_hmac"]);

export function callbackUrl(apiUrlPrefix: string): string {
  return `${apiUrlPrefix}/v1/auth-methods/oidc:authenticate:callback`;
}

export function applyOidcAttributes(a: AttrInput): AttrOutcome {
  const { errors, input, mode } = a;
  for (const key of Object.keys(input)) if (readOnly.has(key)) errors.add(path(key), "Field is read only.");
  rejectUnknown(Object.fromEntries(Object.entries(input).filter(([k]) => !readOnly.has(k))), known, errors);
  const out: Attrs = mode === "create" ? { state: "inactive" } : { ...a.base };
  const secrets: Record<string, string | null> = {};
  // Not sticky: every update stores the flag as sent.
  delete out.disable_discovered_config_validation;
  for (const [key, v] of Object.entries(input)) {
    if (!known.has(key)) continue;
    if (key === "client_id" || key === "client_secret") {
      const s = v === null ? "" : readString(v, key, errors);
      if (s === undefined) continue;
      if (s === "") errors.add(path(key), "Can change but cannot unset this field.");
      else if (key === "client_id") out.client_id = s;
      else secrets.client_secret = s;
    } else if (key === "api_url_prefix") {
      const s = v === null ? "" : readString(v, key, errors);
      if (s === undefined) continue;
      // Canonical: the login's last redirect (a Location header) starts with it (docs/security.md).
      const canonical = s === "" ? undefined : canonicalHttpUrl(s);
      if (s === "") errors.add(path(key), "This field should not be set to empty.");
      else if (hasControlOrSpace(s)) errors.add(path(key), "Must not contain control characters or spaces.");
      else if (canonical === undefined) errors.add(path(key), "Must be an http or https URL with a host.");
      else out.api_url_prefix = canonical.replace(/\/+$/, "");
    } else if (v === null) {
      delete out[key];
    } else if (key === "issuer") {
      const s = readString(v, key, errors);
      if (s === undefined) continue;
      if (s === "") delete out.issuer;
      else {
        const issuer = normalizeIssuer(s);
        if (issuer === undefined) errors.add(path(key), "Must be an http or https URL.");
        else out.issuer = issuer;
      }
    } else if (key === "max_age") {
      const n = readUint32(v, key, errors);
      if (n !== undefined) out.max_age = n;
    } else if (key === "disable_discovered_config_validation") {
      const b = readBool(v, key, errors);
      if (b === undefined) continue;
      if (mode === "create" && b) errors.add(path(key), "Field is not allowed at create time.");
      else if (b) out[key] = true;
    } else {
      const list = readStringList(v, key, errors);
      if (list === undefined) continue;
      if (validateList(key, list, a, errors)) {
        if (list.length === 0) delete out[key];
        else out[key] = list;
      }
    }
  }
  if (mode === "create") {
    for (const key of ["client_id", "api_url_prefix"]) {
      if (!(key in out) && !errors.has(path(key))) errors.add(path(key), "This field is required.");
    }
    if (!("client_secret" in secrets) && !errors.has(path("client_secret"))) {
      errors.add(path("client_secret"), "This field is required.");
    }
  }
  return { attributes: out, secrets };
}

function validateList(key: string, list: string[], a: AttrInput, errors: FieldErrors): boolean {
  switch (key) {
    case "signing_algorithms": {
      const bad = list.find((x) => !jwsAlgorithms.includes(x));
      if (bad !== undefined) errors.add(path(key), `Contains unsupported algorithm "${bad}"`);
      return bad === undefined;
    }
    case "prompts": {
      const bad = list.find((x) => !supportedPrompts.includes(x));
      if (bad !== undefined) errors.add(path(key), `Contains unsupported prompt "${bad}"`);
      else if (list.includes("none") && list.length > 1) {
        errors.add(path(key), 'The "none" prompt cannot be combined with other prompts.');
      } else return true;
      return false;
    }
    case "claims_scopes":
      if (list.includes("openid")) {
        errors.add(path(key), "openid is the default scope and cannot be added as optional claims_scopes.");
        return false;
      }
      return true;
    case "idp_ca_certs":
      if (!validCertificates(list)) {
        errors.add(path(key), "Must be PEM-encoded X.509 certificates.");
        return false;
      }
      return true;
    case "account_claim_maps": {
      const maps = parseClaimMaps(list, key, ["sub", "name", "email"], errors, false);
      if (!maps) return false;
      if (a.mode === "update") {
        const old = parseClaimMaps(
          asList(a.base.account_claim_maps),
          key,
          ["sub", "name", "email"],
          errors,
          false,
        );
        const oldSub = old?.find((m) => m.to === "sub")?.from;
        const newSub = maps.find((m) => m.to === "sub")?.from;
        if (oldSub !== newSub) {
          errors.add(path(key), "The sub claim map can only be set at create time.");
          return false;
        }
      }
      return true;
    }
    default:
      return true;
  }
}

function asList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** Lowercases scheme and host and cuts everything from "/.well-known/" on; undefined if not http(s). */
export function normalizeIssuer(raw: string): string | undefined {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]+)(.*)$/.exec(raw.trim());
  if (!m || !parseHttpUrl(raw.trim())) return undefined;
  let rest = m[3]!;
  const cut = rest.indexOf("/.well-known/");
  if (cut >= 0) rest = rest.slice(0, cut);
  return `${m[1]!.toLowerCase()}://${m[2]!.toLowerCase()}${rest}`;
}

/** What activation needs even with validation disabled: issuer, api_url_prefix, client id/secret, an algorithm. */
export function incompleteFields(attrs: Attrs, hasSecret: boolean): string[] {
  const missing: string[] = [];
  if (!attrs.issuer) missing.push("issuer");
  if (!attrs.api_url_prefix) missing.push("api_url_prefix");
  if (!attrs.client_id) missing.push("client_id");
  if (!hasSecret) missing.push("client_secret");
  if (!Array.isArray(attrs.signing_algorithms) || attrs.signing_algorithms.length === 0) {
    missing.push("signing_algorithms");
  }
  return missing;
}

/** Renders OIDC attributes: client_id always, max_age whenever set (also 0), callback_url derived. */
export function renderOidcAttributes(attrs: Attrs, hmacs: Record<string, string>): Attrs {
  const { client_id, max_age, ...rest } = attrs;
  const out: Attrs = omitZero({
    ...rest,
    client_secret_hmac: hmacs.client_secret,
    callback_url: typeof attrs.api_url_prefix === "string" ? callbackUrl(attrs.api_url_prefix) : undefined,
  });
  out.client_id = client_id ?? "";
  if (typeof max_age === "number") out.max_age = max_age;
  return sortKeys(out);
}

function sortKeys(o: Attrs): Attrs {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
