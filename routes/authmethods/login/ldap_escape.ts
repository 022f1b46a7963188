// LDAP string handling for the LDAP login: RFC 4515 filter escaping, RFC 4514 DN value escaping, the
// `{{.UserAttr}}`-style filter templates, CN extraction from a DN and AD binary SIDs as strings (login names as
// directories compare them: lib/directory_names.ts).

import type { DerefAliases } from "../ldap_connect.ts";

/** Escapes a value for use inside a search filter (RFC 4515: NUL ( ) * \). */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\0()*\\]/g, (c) => "\\" + c.charCodeAt(0).toString(16).padStart(2, "0"));
}

/** Escapes an attribute value for use inside a DN (RFC 4514). */
export function escapeDnValue(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const code = c.charCodeAt(0);
    if ((i === 0 && (c === " " || c === "#")) || (i === value.length - 1 && c === " ")) out += "\\" + c;
    else if ('"+,;<>\\='.includes(c)) out += "\\" + c;
    else if (code < 0x20 || code === 0x7f) out += "\\" + code.toString(16).padStart(2, "0");
    else out += c;
  }
  return out;
}

export type FilterPlaceholder = "UserAttr" | "Username" | "UserDN";

/**
 * Fills `{{.UserAttr}}`, `{{.Username}}`, `{{.UserDN}}` (Go template syntax, spaces allowed) with values the
 * caller has already escaped. Any other `{{…}}` is a configuration error, as in Go's template engine.
 */
export function renderFilterTemplate(
  template: string,
  values: Partial<Record<FilterPlaceholder, string>>,
): string {
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_all, inner: string) => {
    const name = /^\.(UserAttr|Username|UserDN)$/.exec(inner)?.[1] as FilterPlaceholder | undefined;
    const value = name === undefined ? undefined : values[name];
    if (value === undefined) throw new Error(`filter template uses unsupported placeholder {{${inner}}}`);
    return value;
  });
}

interface Rdn {
  type: string;
  value: string;
}

/** Splits a DN into its attribute-value pairs (multi-valued RDNs flattened); undefined if it is not a DN. */
export function parseDn(dn: string): Rdn[][] | undefined {
  const rdns: Rdn[][] = [];
  let current: Rdn[] = [];
  let i = 0;
  const n = dn.length;
  if (dn.trim() === "") return undefined;
  while (i < n) {
    while (i < n && dn[i] === " ") i++;
    const eq = dn.indexOf("=", i);
    if (eq < 0) return undefined;
    const type = dn.slice(i, eq).trim();
    if (!/^(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)*)$/.test(type)) return undefined;
    i = eq + 1;
    let value = "";
    const bytes: number[] = [];
    const flush = () => {
      if (bytes.length) value += new TextDecoder().decode(new Uint8Array(bytes.splice(0)));
    };
    while (i < n && dn[i] !== "," && dn[i] !== "+" && dn[i] !== ";") {
      if (dn[i] === "\\") {
        const hex = dn.slice(i + 1, i + 3);
        if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
          bytes.push(parseInt(hex, 16));
          i += 3;
          continue;
        }
        if (i + 1 >= n) return undefined;
        flush();
        value += dn[i + 1];
        i += 2;
        continue;
      }
      flush();
      value += dn[i];
      i++;
    }
    flush();
    current.push({ type, value: value.trim() });
    const sep = dn[i];
    i++;
    if (sep !== "+") {
      rdns.push(current);
      current = [];
    }
  }
  if (current.length) rdns.push(current);
  return rdns;
}

/** The first CN of a DN (case-insensitive type), or the input itself when it is not a DN or has no CN. */
export function cnOf(value: string): string {
  const rdns = parseDn(value);
  if (!rdns) return value;
  for (const rdn of rdns) {
    for (const { type, value: v } of rdn) if (type.toLowerCase() === "cn") return v;
  }
  return value;
}

/** Converts an AD binary SID (tokenGroups value) to its S-R-I-S… string form. */
export function sidToString(bytes: Uint8Array): string {
  if (bytes.length < 8) throw new Error("SID shorter than 8 bytes");
  const revision = bytes[0]!;
  const count = bytes[1]!;
  if (bytes.length < 8 + 4 * count) throw new Error("SID shorter than its sub-authority count");
  let authority = 0;
  for (let i = 2; i < 8; i++) authority = authority * 256 + bytes[i]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts = [`S-${revision}-${authority}`];
  for (let k = 0; k < count; k++) parts.push(String(view.getUint32(8 + 4 * k, true)));
  return parts.join("-");
}

/** Maps the API's dereference_aliases spellings (long and short) to the protocol values. */
export function derefAliasesOf(value: string | undefined): DerefAliases {
  switch ((value ?? "").toLowerCase()) {
    case "derefalways":
    case "always":
      return "always";
    case "derefinsearching":
    case "searching":
      return "search";
    case "dereffindingbaseobj":
    case "finding":
      return "find";
    default:
      return "never";
  }
}
