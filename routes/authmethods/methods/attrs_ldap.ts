// Attributes of an LDAP auth method: validation, clearing rules and rendering (docs/auth-methods.md#ldap).

import { createPrivateKey, X509Certificate } from "node:crypto";
import {
  type AttrInput,
  type AttrOutcome,
  type Attrs,
  parseClaimMaps,
  path,
  pemBlocks,
  readBool,
  readString,
  readStringList,
  readUint32,
  rejectUnknown,
  validCertificates,
} from "./attrs_common.ts";
import { omitZero } from "../common.ts";

export const ldapStates = ["inactive", "active-private", "active-public"] as const;
const boolFields = [
  "start_tls",
  "insecure_tls",
  "discover_dn",
  "anon_group_search",
  "enable_groups",
  "use_token_groups",
];
const stringFields = [
  "upn_domain",
  "user_dn",
  "user_filter",
  "group_dn",
  "group_filter",
  "bind_dn",
  "user_attr",
  "group_attr",
];
const secretFields = ["bind_password", "client_certificate_key"];
const known = new Set([
  "state",
  "urls",
  ...boolFields,
  ...stringFields,
  "certificates",
  "client_certificate",
  ...secretFields,
  "account_attribute_maps",
  "maximum_page_size",
  "dereference_aliases",
]);
const readOnly = new Set(["bind_password_hmac", "client_certificate_key_hmac"]);

const derefAliases: Record<string, string> = {
  neverderefaliases: "NeverDerefAliases",
  never: "NeverDerefAliases",
  dereffindingbaseobj: "DerefFindingBaseObj",
  finding: "DerefFindingBaseObj",
  derefinsearching: "DerefInSearching",
  searching: "DerefInSearching",
  derefalways: "DerefAlways",
  always: "DerefAlways",
};

export function applyLdapAttributes(a: AttrInput): AttrOutcome {
  const { errors, input } = a;
  for (const key of Object.keys(input)) if (readOnly.has(key)) errors.add(path(key), "Field is read only.");
  rejectUnknown(Object.fromEntries(Object.entries(input).filter(([k]) => !readOnly.has(k))), known, errors);
  const out: Attrs = a.mode === "create" ? { state: "inactive" } : { ...a.base };
  const secrets: Record<string, string | null> = {};
  const has = (k: string) => k in input;
  for (const [key, v] of Object.entries(input)) {
    if (!known.has(key)) continue;
    if (v === null) {
      if (key === "urls") errors.add(path(key), "This field should not be set to empty.");
      else if (key === "state") out.state = "inactive";
      else if (secretFields.includes(key)) secrets[key] = null;
      else delete out[key];
      continue;
    }
    if (key === "state") {
      if (typeof v !== "string" || !(ldapStates as readonly string[]).includes(v)) {
        errors.add(path(key), 'Only supported values are "inactive", "active-private", or "active-public".');
      } else out.state = v;
    } else if (key === "urls") {
      const list = readStringList(v, key, errors);
      if (!list) continue;
      if (list.length === 0) errors.add(path(key), "At least one URL is required.");
      const bad = list.find((u) => !validLdapUrl(u));
      if (list.some(hasCredentials)) {
        // Never echo such a URL: it would show the password it carries.
        errors.add(path(key), "URLs must not carry a user or password: use bind_dn and bind_password.");
      } else if (bad !== undefined) {
        errors.add(path(key), `Invalid URL "${bad}": use ldap:// or ldaps:// with a host.`);
      } else out.urls = list;
    } else if (boolFields.includes(key)) {
      const b = readBool(v, key, errors);
      if (b !== undefined) out[key] = b;
    } else if (stringFields.includes(key)) {
      const s = readString(v, key, errors);
      if (s !== undefined) s === "" ? delete out[key] : out[key] = s;
    } else if (key === "certificates") {
      const list = readStringList(v, key, errors);
      if (!list) continue;
      if (!validCertificates(list)) errors.add(path(key), "Must be PEM-encoded X.509 certificates.");
      else out.certificates = list;
    } else if (key === "client_certificate") {
      const s = readString(v, key, errors);
      if (s === undefined) continue;
      if (s === "") delete out.client_certificate;
      else if (!validCertificates([s])) errors.add(path(key), "Must be a PEM-encoded X.509 certificate.");
      else out.client_certificate = s;
    } else if (secretFields.includes(key)) {
      const s = readString(v, key, errors);
      if (s !== undefined) secrets[key] = s === "" ? null : s;
    } else if (key === "account_attribute_maps") {
      const list = readStringList(v, key, errors);
      if (list && parseClaimMaps(list, key, ["email", "fullName"], errors, true)) out[key] = list;
    } else if (key === "maximum_page_size") {
      const n = readUint32(v, key, errors);
      if (n !== undefined) out[key] = n;
    } else if (key === "dereference_aliases") {
      const s = readString(v, key, errors);
      if (s === undefined) continue;
      const canon = s === "" ? "" : derefAliases[s.toLowerCase()];
      if (canon === undefined) {
        errors.add(
          path(key),
          "Must be NeverDerefAliases, DerefFindingBaseObj, DerefInSearching or DerefAlways.",
        );
      } else if (canon === "") delete out[key];
      else out[key] = canon;
    }
  }
  if (!Array.isArray(out.urls) || out.urls.length === 0) {
    if (!errors.has(path("urls"))) errors.add(path("urls"), "At least one URL is required.");
  }
  checkClientCertificatePair(a, out, secrets, has);
  return { attributes: out, secrets };
}

function hasCredentials(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.username !== "" || u.password !== "";
  } catch {
    return /^[a-z]+:\/\/[^/]*@/i.test(raw);
  }
}

function validLdapUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    if ((u.protocol !== "ldap:" && u.protocol !== "ldaps:") || !u.hostname) return false;
    if (u.port !== "" && (Number(u.port) < 1 || Number(u.port) > 65535)) return false;
    return true;
  } catch {
    return false;
  }
}

/** client_certificate and client_certificate_key are set and cleared together and must match. */
function checkClientCertificatePair(
  a: AttrInput,
  out: Attrs,
  secrets: Record<string, string | null>,
  has: (k: string) => boolean,
): void {
  const certSet = typeof out.client_certificate === "string";
  const keyChange = secrets.client_certificate_key;
  const keySet = keyChange === undefined ? a.baseSecrets.has("client_certificate_key") : keyChange !== null;
  if (certSet !== keySet) {
    const name = has("client_certificate_key") || !has("client_certificate")
      ? "client_certificate_key"
      : "client_certificate";
    a.errors.add(
      path(name),
      "client_certificate and client_certificate_key must be set or cleared together.",
    );
    return;
  }
  if (typeof keyChange === "string" && certSet) {
    if (!pemBlocks(keyChange, /^PRIVATE KEY$/)) {
      a.errors.add(path("client_certificate_key"), "Must be a PEM-encoded PKCS #8 private key.");
      return;
    }
    try {
      const key = createPrivateKey(keyChange);
      if (!new X509Certificate(out.client_certificate as string).checkPrivateKey(key)) {
        a.errors.add(path("client_certificate_key"), "Does not match client_certificate.");
      }
    } catch {
      a.errors.add(path("client_certificate_key"), "Must be a PEM-encoded PKCS #8 private key.");
    }
  }
}

/** Renders stored LDAP attributes plus the HMACs of the secrets it holds; booleans only when true. */
export function renderLdapAttributes(attrs: Attrs, hmacs: Record<string, string>): Attrs {
  return omitZero({
    ...attrs,
    bind_password_hmac: hmacs.bind_password,
    client_certificate_key_hmac: hmacs.client_certificate_key,
  });
}
