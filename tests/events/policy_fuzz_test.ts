// Property tests: whatever the input, the policy parser either returns a policy or throws a PolicyError.

import fc from "fast-check";
import { assert } from "../helpers/assert.ts";
import { parsePolicy, PolicyError, renderRulesJson } from "../../routes/events/policy.ts";

function parsesOrRejects(rules: string): void {
  try {
    const p = parsePolicy(rules);
    JSON.stringify(renderRulesJson(p));
  } catch (err) {
    assert(err instanceof PolicyError, `unexpected ${err instanceof Error ? err.stack : err}`);
  }
}

const fragments = fc.constantFrom(
  "namespace",
  "node",
  "agent",
  "plugin",
  "host_volume",
  "node_pool",
  "variables",
  "path",
  "policy",
  "capabilities",
  '"default"',
  '"*"',
  '"read"',
  '"write"',
  '"deny"',
  '"a\\"b"',
  '"\\u00e9"',
  "{",
  "}",
  "[",
  "]",
  "=",
  ",",
  "\n",
  " ",
  "#c\n",
  "// c\n",
  "/* c */",
  '"',
  "\\",
  ":",
  "0",
);

Deno.test("parsePolicy throws only PolicyError for arbitrary strings", () => {
  fc.assert(fc.property(fc.string({ maxLength: 200 }), parsesOrRejects), { numRuns: 2000 });
  fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 100 }), parsesOrRejects), { numRuns: 500 });
});

Deno.test("parsePolicy throws only PolicyError for token soups of the policy grammar", () => {
  fc.assert(fc.property(fc.array(fragments, { maxLength: 40 }).map((a) => a.join("")), parsesOrRejects), {
    numRuns: 3000,
  });
  fc.assert(fc.property(fc.array(fragments, { maxLength: 40 }).map((a) => a.join(" ")), parsesOrRejects), {
    numRuns: 2000,
  });
});

Deno.test("parsePolicy throws only PolicyError for arbitrary JSON values", () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => parsesOrRejects(JSON.stringify(v))), {
    numRuns: 2000,
  });
  const shaped = fc.dictionary(
    fc.constantFrom("namespace", "node", "variables", "path", "policy", "capabilities", "node_pool"),
    fc.jsonValue({ maxDepth: 4 }),
  );
  fc.assert(fc.property(shaped, (v) => parsesOrRejects(JSON.stringify(v))), { numRuns: 2000 });
});

Deno.test("parsePolicy survives deeply nested input", () => {
  parsesOrRejects('namespace "a" {'.repeat(5000));
  parsesOrRejects('{"namespace":'.repeat(5000));
  parsesOrRejects("[".repeat(100000));
});
