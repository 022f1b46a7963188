// LDAP login with Boundary's semantics (docs/auth-methods.md#ldap): connect, find the bind DN (direct or
// discover_dn), bind as the user, read the entry's attributes and the groups. Returns a result, never throws
// for directory faults.

import { type Client, type Entry, PresenceFilter, ResultCodeError } from "ldapts";
import type { DerefAliases, LdapTlsSettings } from "../ldap_connect.ts";
import { freshConnections, type LdapConnectionSource } from "../ldap_pool.ts";
import {
  cnOf,
  derefAliasesOf,
  escapeDnValue,
  escapeFilterValue,
  renderFilterTemplate,
  sidToString,
} from "./ldap_escape.ts";

/** The method's LDAP attributes (API names), secrets decrypted. Absent booleans mean false. */
export interface LdapMethodAttributes extends LdapTlsSettings {
  urls: string[];
  discover_dn?: boolean;
  anon_group_search?: boolean;
  enable_groups?: boolean;
  use_token_groups?: boolean;
  upn_domain?: string;
  user_dn?: string;
  user_attr?: string;
  user_filter?: string;
  group_dn?: string;
  group_attr?: string;
  group_filter?: string;
  bind_dn?: string;
  bind_password?: string;
  account_attribute_maps?: string[];
  maximum_page_size?: number;
  dereference_aliases?: string;
}

export type LdapAuthResult =
  | { ok: true; entryDn: string; attributes: Record<string, string[]>; groups: string[] }
  | { ok: false; reason: "invalid_credentials" | "directory_error"; message: string };

export const defaultUserAttr = "cn";
export const defaultGroupAttr = "cn";
export const defaultUserFilter = "({{.UserAttr}}={{.Username}})";
export const defaultGroupFilter =
  "(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))";

/** Result codes of a failed user bind that mean "these credentials are not good" rather than a broken directory. */
const credentialResultCodes = new Set([
  32, // noSuchObject
  34, // invalidDNSyntax: the login name made no valid DN
  48, // inappropriateAuthentication
  49, // invalidCredentials
  50, // insufficientAccessRights
  53, // unwillingToPerform (e.g. disabled account)
]);

const passwordAttributes = new Set(["userpassword", "unicodepwd"]);

/** "(objectClass=*)", built once: ldapts would parse the filter string again for every search. */
const anyEntry = new PresenceFilter({ attribute: "objectClass" });
const utf8 = new TextDecoder();

class LoginFailure extends Error {
  constructor(readonly reason: "invalid_credentials" | "directory_error", message: string) {
    super(message);
  }
}

function describe(err: unknown): string {
  if (err instanceof ResultCodeError) return `${err.message} (LDAP result ${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

/** Runs one directory step, turning any failure into a directory_error with `what` as context. */
async function step<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof LoginFailure) throw err;
    throw new LoginFailure("directory_error", `${what}: ${describe(err)}`);
  }
}

/** A bind with no password is an unauthenticated bind (anonymous when the DN is empty too). */
async function bindAs(client: Client, dn: string, password: string | undefined): Promise<void> {
  await client.bind(dn, password ?? "");
}

/** An attribute's values as strings (binary values decoded as UTF-8). */
function asStrings(raw: Entry[string] | undefined): string[] {
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.map((v) => (typeof v === "string" ? v : utf8.decode(v)));
}

function valuesOf(entry: Entry, name: string): string[] {
  const lower = name.toLowerCase();
  const key = Object.keys(entry).find((k) => k.toLowerCase() === lower);
  if (key === undefined || key === "dn") return [];
  return asStrings(entry[key]);
}

function entryAttributes(entry: Entry): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const key in entry) {
    if (key === "dn" || passwordAttributes.has(key.toLowerCase())) continue;
    out[key] = asStrings(entry[key]);
  }
  return out;
}

interface Session {
  client: Client;
  attrs: LdapMethodAttributes;
  deref: DerefAliases;
  login: string;
}

async function discoverBindDn(s: Session): Promise<string> {
  const { attrs } = s;
  await step("service bind failed", () => bindAs(s.client, attrs.bind_dn ?? "", attrs.bind_password));
  const username = attrs.upn_domain
    ? `${escapeFilterValue(s.login)}@${attrs.upn_domain}`
    : escapeFilterValue(s.login);
  const userAttr = attrs.upn_domain
    ? "userPrincipalName"
    : escapeFilterValue(attrs.user_attr || defaultUserAttr);
  const filter = await step(
    "user filter",
    () =>
      renderFilterTemplate(attrs.user_filter || defaultUserFilter, {
        UserAttr: userAttr,
        Username: username,
      }),
  );
  const base = attrs.user_dn ?? "";
  const { searchEntries } = await step(
    `user search (base ${JSON.stringify(base)}, filter ${JSON.stringify(filter)}) failed`,
    () => s.client.search(base, { scope: "sub", filter, derefAliases: s.deref, attributes: ["1.1"] }),
  );
  if (searchEntries.length === 0) {
    throw new LoginFailure("invalid_credentials", "no directory entry for the user");
  }
  if (searchEntries.length > 1) {
    throw new LoginFailure(
      "directory_error",
      `user search found ${searchEntries.length} entries, expected one`,
    );
  }
  return searchEntries[0]!.dn;
}

function directBindDn(attrs: LdapMethodAttributes, login: string): string {
  if (attrs.upn_domain) return `${escapeDnValue(login)}@${attrs.upn_domain}`;
  return `${attrs.user_attr || defaultUserAttr}=${escapeDnValue(login)},${attrs.user_dn}`;
}

async function userEntryDn(s: Session, bindDn: string): Promise<string> {
  if (!s.attrs.upn_domain) return bindDn;
  const filter = `(userPrincipalName=${escapeFilterValue(s.login)}@${s.attrs.upn_domain})`;
  const { searchEntries } = await step(
    "user principal search failed",
    () =>
      s.client.search(s.attrs.user_dn ?? "", {
        scope: "sub",
        filter,
        derefAliases: s.deref,
        attributes: ["1.1"],
      }),
  );
  const last = searchEntries.at(-1);
  if (!last) throw new LoginFailure("directory_error", "no entry has the user's userPrincipalName");
  return last.dn;
}

/**
 * The user's entry: its DN as the directory spells it (not as the login name spelled the bind DN, so every
 * accepted spelling of one name gives one DN) and its attributes.
 */
async function readUserEntry(
  s: Session,
  dn: string,
): Promise<{ dn: string; attributes: Record<string, string[]> }> {
  const { searchEntries } = await step(
    "reading the user entry failed",
    () => s.client.search(dn, { scope: "base", filter: anyEntry, derefAliases: s.deref }),
  );
  if (searchEntries.length !== 1) {
    throw new LoginFailure("directory_error", "the user entry could not be read");
  }
  const entry = searchEntries[0]!;
  return { dn: entry.dn || dn, attributes: entryAttributes(entry) };
}

async function tokenGroupEntries(s: Session, userDn: string): Promise<Entry[]> {
  const { searchEntries } = await step("tokenGroups search failed", () =>
    s.client.search(userDn, {
      scope: "base",
      filter: anyEntry,
      derefAliases: s.deref,
      attributes: ["tokenGroups"],
      explicitBufferAttributes: ["tokenGroups"],
      sizeLimit: 1,
    }));
  const user = searchEntries[0];
  if (!user) return [];
  const raw = user.tokenGroups;
  const sids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v) =>
    typeof v !== "string"
  );
  const groups: Entry[] = [];
  for (const bytes of sids) {
    // As in Boundary, an unreadable or unresolvable SID is skipped rather than failing the login.
    try {
      const sid = sidToString(new Uint8Array(bytes as Uint8Array));
      const found = await s.client.search(`<SID=${sid}>`, {
        scope: "base",
        filter: anyEntry,
        derefAliases: s.deref,
        attributes: ["1.1"],
        sizeLimit: 1,
      });
      if (found.searchEntries[0]) groups.push(found.searchEntries[0]);
    } catch {
      continue;
    }
  }
  return groups;
}

async function filterGroupEntries(s: Session, userDn: string, groupAttr: string): Promise<Entry[]> {
  const { attrs } = s;
  if (!attrs.group_dn) return [];
  const filter = await step(
    "group filter",
    () =>
      renderFilterTemplate(attrs.group_filter || defaultGroupFilter, {
        UserDN: escapeFilterValue(userDn),
        Username: escapeFilterValue(s.login),
      }),
  );
  const pageSize = attrs.maximum_page_size ?? 0;
  try {
    const { searchEntries } = await s.client.search(attrs.group_dn, {
      scope: "sub",
      filter,
      derefAliases: s.deref,
      attributes: [groupAttr],
      ...(pageSize > 0 ? { paged: { pageSize } } : {}),
    });
    return searchEntries;
  } catch (err) {
    // A group base that does not exist means "no groups", not a failed login (as in Boundary).
    if (err instanceof ResultCodeError && err.code === 32) return [];
    throw new LoginFailure("directory_error", `group search failed: ${describe(err)}`);
  }
}

async function findGroups(s: Session, userDn: string): Promise<string[]> {
  const groupAttr = s.attrs.group_attr || defaultGroupAttr;
  if (s.attrs.anon_group_search) {
    await step("anonymous bind for the group search failed", () => bindAs(s.client, userDn, undefined));
  }
  const entries = s.attrs.use_token_groups
    ? await tokenGroupEntries(s, userDn)
    : await filterGroupEntries(s, userDn, groupAttr);
  const names = new Set<string>();
  for (const entry of entries) {
    const values = valuesOf(entry, groupAttr);
    if (values.length) { for (const v of values) names.add(cnOf(v)); }
    else names.add(cnOf(entry.dn));
  }
  return [...names].sort();
}

async function authenticateOn(s: Session, password: string): Promise<LdapAuthResult> {
  const { attrs } = s;
  const hasServiceAccount = Boolean(attrs.bind_dn && attrs.bind_password);
  const bindDn = attrs.discover_dn || hasServiceAccount
    ? await discoverBindDn(s)
    : directBindDn(attrs, s.login);
  try {
    await s.client.bind(bindDn, password);
  } catch (err) {
    if (err instanceof ResultCodeError && credentialResultCodes.has(err.code)) {
      throw new LoginFailure("invalid_credentials", `user bind rejected: ${describe(err)}`);
    }
    throw new LoginFailure("directory_error", `user bind failed: ${describe(err)}`);
  }
  // The service account, not the user, reads the directory when one is configured.
  if (hasServiceAccount) {
    await step("re-bind as bind_dn failed", () => bindAs(s.client, attrs.bind_dn!, attrs.bind_password));
  }
  const { dn: entryDn, attributes } = await readUserEntry(s, await userEntryDn(s, bindDn));
  const groups = attrs.enable_groups ? await findGroups(s, entryDn) : [];
  return { ok: true, entryDn, attributes, groups };
}

/**
 * Authenticates `loginName`/`password` against the method's directory. Empty passwords are refused before
 * any connection (an empty simple bind would be an anonymous bind, which "succeeds").
 */
export async function ldapAuthenticate(
  attrs: LdapMethodAttributes,
  loginName: string,
  password: string,
  options: { timeoutMs?: number; connections?: LdapConnectionSource } = {},
): Promise<LdapAuthResult> {
  if (!loginName) return { ok: false, reason: "invalid_credentials", message: "empty login name" };
  if (!password) return { ok: false, reason: "invalid_credentials", message: "empty password" };
  if (!attrs.discover_dn && !(attrs.bind_dn && attrs.bind_password) && !attrs.upn_domain && !attrs.user_dn) {
    return {
      ok: false,
      reason: "directory_error",
      message:
        "cannot derive the user's bind DN: set discover_dn, bind_dn + bind_password, upn_domain or user_dn",
    };
  }
  const timeoutMs = options.timeoutMs ?? 5000;
  const deref = derefAliasesOf(attrs.dereference_aliases);
  const connections = options.connections ?? freshConnections(attrs, timeoutMs, deref);
  const first = await attemptOn(connections, attrs, deref, loginName, password);
  // A pooled connection may have been closed by the server while idle: such a failure is retried once on
  // a new connection (the user's bind runs again, against the directory, with the same password).
  if (first.reused && !first.result.ok && first.result.reason === "directory_error") {
    return (await attemptOn(freshOnly(connections), attrs, deref, loginName, password)).result;
  }
  return first.result;
}

/** `source` without its idle connections: opens a new one, still returns it to the pool when healthy. */
function freshOnly(source: LdapConnectionSource): LdapConnectionSource {
  return {
    open: async () => {
      for (;;) {
        const got = await source.open();
        if (!got.reused) return got;
        await source.done(got.client, false);
      }
    },
    done: (client, reusable) => source.done(client, reusable),
  };
}

async function attemptOn(
  connections: LdapConnectionSource,
  attrs: LdapMethodAttributes,
  deref: DerefAliases,
  loginName: string,
  password: string,
): Promise<{ result: LdapAuthResult; reused: boolean }> {
  let opened: { client: Client; reused: boolean };
  try {
    opened = await connections.open();
  } catch (err) {
    return { result: { ok: false, reason: "directory_error", message: describe(err) }, reused: false };
  }
  const { client, reused } = opened;
  let result: LdapAuthResult;
  try {
    result = await authenticateOn({ client, attrs, deref, login: loginName }, password);
  } catch (err) {
    result = err instanceof LoginFailure
      ? { ok: false, reason: err.reason, message: err.message }
      : { ok: false, reason: "directory_error", message: describe(err) };
  }
  // Only a connection whose every exchange got an LDAP answer goes back: after a timeout or a socket
  // error its state is unknown. The next login on it starts with a bind, so no identity carries over.
  await connections.done(client, result.ok || result.reason === "invalid_credentials");
  return { result, reused };
}
