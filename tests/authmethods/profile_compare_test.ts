// sameProfile: an LDAP or OIDC login rewrites the account only when the profile it read differs.

import { assertEquals } from "../helpers/assert.ts";
import { sameProfile } from "../../routes/authmethods/login/external_accounts.ts";

Deno.test("sameProfile is true for equal attributes whatever their key order", () => {
  const stored = { login_name: "ann", dn: "uid=ann,ou=people", email: "a@x", member_of_groups: ["a", "b"] };
  assertEquals(sameProfile(stored, { ...stored }), true);
  assertEquals(
    sameProfile(stored, { member_of_groups: ["a", "b"], email: "a@x", dn: stored.dn, login_name: "ann" }),
    true,
  );
});

Deno.test("sameProfile is false when a value, a group or a key changes", () => {
  const stored = { login_name: "ann", email: "a@x", member_of_groups: ["a", "b"] };
  assertEquals(sameProfile(stored, { ...stored, email: "b@x" }), false);
  assertEquals(sameProfile(stored, { ...stored, member_of_groups: ["a"] }), false);
  assertEquals(sameProfile(stored, { ...stored, member_of_groups: ["a", "c"] }), false);
  assertEquals(sameProfile(stored, { login_name: "ann", email: "a@x" }), false, "a dropped key");
  assertEquals(sameProfile(stored, { ...stored, full_name: "Ann" }), false, "an added key");
  assertEquals(sameProfile(undefined, { login_name: "ann" }), false);
  assertEquals(
    sameProfile({ login_name: "ann", extra: { a: 1 } }, { login_name: "ann", extra: { a: 1 } }),
    true,
  );
  assertEquals(
    sameProfile({ login_name: "ann", extra: { a: 1 } }, { login_name: "ann", extra: { a: 2 } }),
    false,
  );
});
