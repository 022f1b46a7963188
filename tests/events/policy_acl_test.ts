// Unit tests of policy merging, namespace lookup precedence and the compiled Acl
// (docs/events.md#acl-policies-for-stream-readers).

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import {
  compileAcl,
  globMatches,
  lookupNamespace,
  mergePolicies,
  parsePolicy,
} from "../../routes/events/policy.ts";

const acl = (...rules: string[]) => compileAcl(rules.map(parsePolicy));

Deno.test("globMatches treats * as any run of characters, including none", () => {
  assert(globMatches("*", ""));
  assert(globMatches("*", "anything"));
  assert(globMatches("prod-*", "prod-"));
  assert(globMatches("prod-*", "prod-web"));
  assert(globMatches("*-web-*", "eu-web-1"));
  assert(globMatches("a*b*c", "abc"));
  assert(!globMatches("a*b*c", "acb"));
  assert(!globMatches("prod-*", "dev-web"));
  assert(!globMatches("ab*ba", "aba"));
  assert(!globMatches("exact", "exactly"));
});

Deno.test("globMatches agrees with an anchored regular expression for random globs", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "b", "-"), maxLength: 8 });
  const glob = fc.string({ unit: fc.constantFrom("a", "b", "-", "*"), maxLength: 6 });
  fc.assert(
    fc.property(glob, text, (g, t) => {
      const reference = new RegExp(`^${g.split("*").map((p) => p.replace(/-/g, "\\-")).join(".*")}$`);
      assertEquals(globMatches(g, t), reference.test(t), `${g} vs ${t}`);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("a namespace read policy grants read-job and list-jobs in that namespace only", () => {
  const a = acl(`namespace "default" { policy = "read" }`);
  assertEquals(a.management, false);
  assert(a.allowNamespace("default", "read-job"));
  assert(a.allowNamespace("default", "list-jobs"));
  assert(!a.allowNamespace("default", "submit-job"));
  assert(!a.allowNamespace("other", "read-job"));
  assert(!a.allowNodeRead());
});

Deno.test("merging unions capabilities, and deny anywhere leaves only deny", () => {
  const union = acl(
    `namespace "web" { capabilities = ["read-job"] }`,
    `namespace "web" { capabilities = ["submit-job"] }`,
  );
  assert(union.allowNamespace("web", "read-job") && union.allowNamespace("web", "submit-job"));
  const denied = acl(`namespace "web" { policy = "write" }`, `namespace "web" { policy = "deny" }`);
  assert(!denied.allowNamespace("web", "read-job"));
  const merged = mergePolicies([
    parsePolicy(`namespace "web" { policy = "write" }`),
    parsePolicy(`namespace "web" { capabilities = ["deny"] }`),
  ]);
  assertEquals([...merged.namespaces.get("web")!], ["deny"]);
});

Deno.test("node levels merge with deny over write over read", () => {
  const readWrite = acl(`node { policy = "read" }`, `node { policy = "write" }`);
  assert(readWrite.allowNodeRead() && readWrite.allowNodeWrite());
  const readOnly = acl(`node { policy = "read" }`);
  assert(readOnly.allowNodeRead() && !readOnly.allowNodeWrite());
  const denied = acl(`node { policy = "write" }`, `node { policy = "deny" }`);
  assert(!denied.allowNodeRead() && !denied.allowNodeWrite());
  assertEquals(
    mergePolicies([parsePolicy(`plugin { policy = "list" }`), parsePolicy(`plugin { policy = "read" }`)])
      .plugin,
    "read",
  );
});

Deno.test("an exact namespace rule beats every glob, even when it denies", () => {
  const a = acl(`namespace "*" { policy = "write" }\nnamespace "prod" { policy = "deny" }`);
  assert(!a.allowNamespace("prod", "read-job"));
  assert(a.allowNamespace("production", "submit-job"));
  const b = acl(`namespace "prod-*" { policy = "deny" }\nnamespace "prod-web" { policy = "read" }`);
  assert(b.allowNamespace("prod-web", "read-job"));
  assert(!b.allowNamespace("prod-db", "read-job"));
});

Deno.test("the closest glob wins, and ties go to the bytewise-first glob", () => {
  const a = acl(`namespace "*" { policy = "read" }\nnamespace "prod-*" { policy = "deny" }`);
  assert(!a.allowNamespace("prod-web", "read-job"));
  assert(a.allowNamespace("dev", "read-job"));
  // For "prod-web": "prod-*" is at distance 8 − 6 + 1 = 3, "*-web" at 4, so "prod-*" wins.
  const closer = acl(`namespace "prod-*" { policy = "deny" }\nnamespace "*-web" { policy = "read" }`);
  assert(!closer.allowNamespace("prod-web", "read-job"));
  // "prod-*" and "*d-web" are both at distance 3; "*d-web" sorts first bytewise ("*" < "p").
  const tie = acl(`namespace "prod-*" { policy = "deny" }\nnamespace "*d-web" { policy = "read" }`);
  assert(tie.allowNamespace("prod-web", "read-job"));
  const rules =
    mergePolicies([parsePolicy(`namespace "a*" { policy = "read" }\nnamespace "ab*" { policy = "write" }`)])
      .namespaces;
  assert(lookupNamespace(rules, "abc")!.has("submit-job"));
  assertEquals(lookupNamespace(rules, "zz"), undefined);
});

Deno.test("allowAllNamespaces needs a * rule granting it and no other rule failing it", () => {
  assert(!acl(`namespace "default" { policy = "read" }`).allowAllNamespaces("read-job"));
  assert(acl(`namespace "*" { policy = "read" }`).allowAllNamespaces("read-job"));
  assert(
    acl(`namespace "*" { policy = "read" }\nnamespace "dev" { policy = "write" }`).allowAllNamespaces(
      "read-job",
    ),
  );
  assert(
    !acl(`namespace "*" { policy = "read" }\nnamespace "dev" { policy = "deny" }`).allowAllNamespaces(
      "read-job",
    ),
  );
  assert(
    !acl(`namespace "*" { policy = "read" }\nnamespace "ops" { capabilities = ["submit-job"] }`)
      .allowAllNamespaces("read-job"),
  );
  assert(!acl(`namespace "*" { policy = "read" }`).allowAllNamespaces("submit-job"));
  assert(!acl(`namespace "prod-*" { policy = "read" }`).allowAllNamespaces("read-job"));
});

Deno.test("management and no policies are the two extremes", () => {
  const m = compileAcl([], { management: true });
  assert(
    m.management && m.allowAllNamespaces("submit-job") && m.allowNodeWrite() && m.allowNamespace("x", "y"),
  );
  const none = compileAcl([]);
  assert(
    !none.management && !none.allowNamespace("default", "read-job") && !none.allowAllNamespaces("read-job"),
  );
  assert(!none.allowNodeRead());
});
