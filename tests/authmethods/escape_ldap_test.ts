// Unit tests of the LDAP string helpers: escaping, filter templates, CN extraction, SIDs, deref spellings.

import { assertEquals, assertThrows } from "../helpers/assert.ts";
import {
  cnOf,
  derefAliasesOf,
  escapeDnValue,
  escapeFilterValue,
  renderFilterTemplate,
  sidToString,
} from "../../routes/authmethods/login/ldap_escape.ts";

Deno.test("escapeFilterValue escapes the RFC 4515 metacharacters when a login name contains them", () => {
  assertEquals(escapeFilterValue("a*b(c)d\\e\0"), "a\\2ab\\28c\\29d\\5ce\\00");
  assertEquals(escapeFilterValue("jürgen"), "jürgen");
});

Deno.test("escapeDnValue escapes RFC 4514 specials and leading/trailing spaces when building a DN", () => {
  assertEquals(escapeDnValue("a,b+c"), "a\\,b\\+c");
  assertEquals(escapeDnValue(" #x "), "\\ #x\\ ");
  assertEquals(escapeDnValue("#x"), "\\#x");
  assertEquals(escapeDnValue('q"<>;='), 'q\\"\\<\\>\\;\\=');
  assertEquals(escapeDnValue("tab\there"), "tab\\09here");
});

Deno.test("renderFilterTemplate fills Go-style placeholders and refuses unknown ones", () => {
  assertEquals(
    renderFilterTemplate("(&({{.UserAttr}}={{ .Username }})(member={{.UserDN}}))", {
      UserAttr: "uid",
      Username: "bob",
      UserDN: "uid=bob,dc=x",
    }),
    "(&(uid=bob)(member=uid=bob,dc=x))",
  );
  assertThrows(() => renderFilterTemplate("({{.Nope}}=x)", { Username: "bob" }));
  assertThrows(() => renderFilterTemplate("(member={{.UserDN}})", { Username: "bob" }));
});

Deno.test("cnOf returns the CN of a DN and the input itself when it is not a DN", () => {
  assertEquals(cnOf("cn=developers,ou=groups,dc=example,dc=org"), "developers");
  assertEquals(cnOf("CN=Domain Users,CN=Users,DC=corp"), "Domain Users");
  assertEquals(cnOf("cn=a\\,b,dc=x"), "a,b");
  assertEquals(cnOf("cn=caf\\c3\\a9,dc=x"), "café");
  assertEquals(cnOf("ou=only,dc=x"), "ou=only,dc=x");
  assertEquals(cnOf("plain-group"), "plain-group");
});

Deno.test("sidToString renders a binary SID in S-R-I-S form", () => {
  // S-1-5-21-1-2-3-513 (revision 1, 4-byte sub-authorities little-endian).
  const bytes = new Uint8Array([
    1,
    5,
    0,
    0,
    0,
    0,
    0,
    5,
    21,
    0,
    0,
    0,
    1,
    0,
    0,
    0,
    2,
    0,
    0,
    0,
    3,
    0,
    0,
    0,
    1,
    2,
    0,
    0,
  ]);
  assertEquals(sidToString(bytes), "S-1-5-21-1-2-3-513");
  assertThrows(() => sidToString(new Uint8Array([1, 5, 0])));
});

Deno.test("derefAliasesOf accepts long and short spellings and defaults to never", () => {
  assertEquals(derefAliasesOf("DerefAlways"), "always");
  assertEquals(derefAliasesOf("always"), "always");
  assertEquals(derefAliasesOf("DerefInSearching"), "search");
  assertEquals(derefAliasesOf("searching"), "search");
  assertEquals(derefAliasesOf("DerefFindingBaseObj"), "find");
  assertEquals(derefAliasesOf("finding"), "find");
  assertEquals(derefAliasesOf("NeverDerefAliases"), "never");
  assertEquals(derefAliasesOf(undefined), "never");
});
