// Login names as directories match them (RFC 4518 string preparation): what the LDAP login and the registry's
// login throttle key a name by, so every spelling a directory takes for one entry is one name.

/** LDAP string preparation's mapping step: characters mapped to SPACE, and characters mapped to nothing. */
// deno-lint-ignore no-control-regex
const mappedToSpace = /[\u0009-\u000D\u0085\p{Z}]/gu;
const mappedToNothing = /[\p{Cc}\p{Cf}\u034F\u1806\u180B-\u180D\uFE00-\uFE0F\uFFFC]/gu;

/**
 * A login name as directories match the usual naming attributes (uid, cn, mail, userPrincipalName:
 * caseIgnoreMatch and friends, prepared per RFC 4518): ignorable characters dropped, compatibility
 * normalized, case folded, outer spaces removed and inner runs of spaces made one. Every spelling a
 * directory takes for one entry gives one key (the throttle's and the account's login_name).
 */
export function ldapLoginKey(login: string): string {
  return login
    .replace(mappedToSpace, " ")
    .replace(mappedToNothing, "")
    .normalize("NFKC")
    .toUpperCase()
    .toLowerCase()
    .trim()
    .replace(/ +/g, " ");
}
