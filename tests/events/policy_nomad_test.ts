// The policy parser against Nomad's own: one case per class the conformance kit found (issue #17). Every
// expected value below is what Nomad's acl.Parse (v1.11.3, HCL v1.0.1-nomad-1) answered in the kit's
// nomad-policy program: the RulesJSON of an accepted policy (non-null fields only) or the exact error text.

import { assert, assertEquals } from "../helpers/assert.ts";
import { parsePolicy, PolicyError, renderRulesJson } from "../../routes/events/policy.ts";
import { readCaps, scaleCaps } from "./policy_expected.ts";

const writeCaps = [
  ...readCaps,
  "scale-job",
  "submit-job",
  "dispatch-job",
  "read-logs",
  "read-fs",
  "alloc-exec",
  "alloc-lifecycle",
  "csi-mount-volume",
  "csi-write-volume",
  "submit-recommendation",
  "host-volume-create",
  "host-volume-read",
];
const ns = (Name: string, Policy: string, Capabilities: string[] | null, Variables: unknown = null) => ({
  Name,
  Policy,
  Capabilities,
  Variables,
});

/** What wharf answers: the non-null RulesJSON fields, or the error text. */
function outcome(rules: string): Record<string, unknown> | string {
  try {
    const rj = renderRulesJson(parsePolicy(rules));
    return Object.fromEntries(Object.entries(rj).filter(([, v]) => v !== null));
  } catch (err) {
    assert(err instanceof PolicyError, `expected a PolicyError, got ${err}`);
    return err.message;
  }
}

function check(cases: ReadonlyArray<readonly [string, Record<string, unknown> | string]>): void {
  for (const [rules, expected] of cases) assertEquals(outcome(rules), expected, JSON.stringify(rules));
}

Deno.test("Nomad: policy scale is valid outside a namespace, and plugin takes write", () => {
  check([
    [`node { policy = "scale" }`, { Node: { Policy: "scale" } }],
    [`node_pool "p" { policy = "scale" }`, {
      NodePools: [{ Name: "p", Policy: "scale", Capabilities: null }],
    }],
    [`host_volume "v" { policy = "scale" }`, {
      HostVolumes: [{ Name: "v", Policy: "scale", Capabilities: null }],
    }],
    [`plugin { policy = "write" }`, { Plugin: { Policy: "write" } }],
  ]);
});

Deno.test("Nomad: operator policies expand into capabilities, explicit ones are validated", () => {
  check([
    [`operator { policy = "read" }`, {
      Operator: { Policy: "read", Capabilities: ["license-read", "keyring-read"] },
    }],
    [`operator { policy = "write" capabilities = ["snapshot-save"] }`, {
      Operator: {
        Policy: "write",
        Capabilities: [
          "snapshot-save",
          "snapshot-save",
          "license-read",
          "keyring-rotate",
          "keyring-read",
          "keyring-delete",
        ],
      },
    }],
    [`operator { capabilities = ["bogus"] }`, "Invalid operator capability 'bogus'"],
  ]);
});

Deno.test("Nomad: RulesJSON keeps duplicate capabilities and an empty list as []", () => {
  check([
    [`namespace "d" { policy = "scale" capabilities = ["read-job"] }`, {
      Namespaces: [ns("d", "scale", ["read-job", ...scaleCaps])],
    }],
    [`namespace "d" { capabilities = [] }`, { Namespaces: [ns("d", "", [])] }],
    [`namespace "d" { policy = "write" }`, { Namespaces: [ns("d", "write", writeCaps)] }],
  ]);
});

Deno.test("Nomad: the fine-grained namespace capabilities of Nomad 1.10+ are accepted", () => {
  check([
    [`namespace "d" { capabilities = ["register-job", "purge-job"] }`, {
      Namespaces: [ns("d", "", ["register-job", "purge-job"])],
    }],
  ]);
});

Deno.test("Nomad: unknown keys inside a block are ignored, at the top level refused", () => {
  check([
    [`namespace "d" { policy = "read" foo = "bar" nested "x" { policy = "write" } }`, {
      Namespaces: [ns("d", "read", readCaps)],
    }],
    [`node { policy = "read" capabilities = ["read"] }`, { Node: { Policy: "read" } }],
    [`namespace "d" { policy = "read" }\nfoo = "bar"`, "Invalid or duplicate policy keys: foo"],
  ]);
});

Deno.test("Nomad: repeated keys: the last string wins, lists append, a repeated level block is refused", () => {
  check([
    [`namespace "d" { policy = "read" policy = "write" }`, { Namespaces: [ns("d", "write", writeCaps)] }],
    [`namespace "d" { capabilities = ["list-jobs"]\n capabilities = ["read-job"] }`, {
      Namespaces: [ns("d", "", ["list-jobs", "read-job"])],
    }],
    [`node { policy = "read" }\nnode { policy = "write" }`, "Invalid or duplicate policy keys: node"],
  ]);
});

Deno.test("Nomad: commas may separate attributes; HCL's other leniencies", () => {
  check([
    [`namespace "d" { policy = "read", capabilities = ["list-jobs"] }`, {
      Namespaces: [ns("d", "read", ["list-jobs", ...readCaps])],
    }],
    // A list error right before the block's `}` is forgiven by HCL (the attribute is dropped).
    [`namespace "d" { capabilities = ["a" } }`, { Namespaces: [ns("d", "", null)] }],
    // A third label is folded into the block body and ignored.
    [`namespace "d" { variables { path "a" "b" { capabilities = ["read"] } } }`, {
      Namespaces: [ns("d", "", null, { Paths: [{ PathSpec: "a", Capabilities: null }] })],
    }],
    [`namespace "d" { policy = "r\\x65ad" }`, { Namespaces: [ns("d", "read", readCaps)] }],
  ]);
});

Deno.test("Nomad: JSON rules as HCL's JSON reader takes them", () => {
  check([
    [`{"node":{"policy":"read",}}`, { Node: { Policy: "read" } }],
    [`{"node":{"policy":"read"}} trailing`, { Node: { Policy: "read" } }],
    [`{"node":[{"policy":"read"}]}`, { Node: { Policy: "read" } }],
    [`{"namespace":{"default":{"policy":null}}}`, { Namespaces: [ns("default", "", null)] }],
    [`{"namespace":{"a":{"policy":"read"}}, "namespace":{"b":{"policy":"write"}}}`, {
      Namespaces: [ns("a", "read", readCaps), ns("b", "write", writeCaps)],
    }],
    // Objects of objects are flattened into one item, so the variables' capabilities land on the namespace.
    [
      `{"namespace":{"default":{"variables":{"path":{"a":{"capabilities":["read"]}}}}}}`,
      `Invalid namespace capability 'read': &acl.NamespacePolicy{Name:"default", Policy:"", Capabilities:[]string{"read"}, Variables:(*acl.VariablesPolicy)(nil)}`,
    ],
    [
      `{"namespace":{"":{}}}`,
      `Invalid namespace name: &acl.NamespacePolicy{Name:"", Policy:"", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}`,
    ],
  ]);
});

Deno.test("Nomad: empty text, sentinel blocks and the reasons of refused syntax", () => {
  check([
    ["", {}],
    [" ", "Invalid policy:  "],
    [`sentinel { policy = "read" }`, {}],
    [`namespace "d" { policy = "re\\/ad" }`, "Failed to parse ACL Policy: At 1:30: illegal char escape"],
    [`\ufeffnode { policy = "read" }`, "Failed to parse ACL Policy: At 1:1: illegal char"],
    [
      `namespace "d" { variables { path { capabilities = ["read"] } } }`,
      "Failed to parse ACL Policy: At 1:51: root.namespace[0].variables.path[0]: not an object type for struct (*ast.ListType)",
    ],
    [`node { policy = "read" } = 1`, "Failed to parse ACL Policy: At 1:26: no object keys found!"],
    [
      `namespace "d" { policy = null }`,
      "Failed to parse ACL Policy: At 1:26: Unknown token: 1:26 IDENT null",
    ],
    [
      `host_volume "v" { capabilities = ["mount"] }`,
      `Invalid host volume capability 'mount': &acl.HostVolumePolicy{Name:"v", Policy:"", Capabilities:[]string{"mount"}}`,
    ],
  ]);
});

Deno.test("Nomad: escapes that make bytes which are not UTF-8 read as Go reads them", () => {
  check([
    [
      `namespace "defau\\xfflt" { policy = "read" }`,
      `Invalid namespace name: &acl.NamespacePolicy{Name:"defau\\xfflt", Policy:"read", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}`,
    ],
    [`namespace "d" { variables { path "a\\xffb" { capabilities = ["read"] } } }`, {
      Namespaces: [ns("d", "", null, { Paths: [{ PathSpec: "a\ufffdb", Capabilities: ["read", "list"] }] })],
    }],
    [`namespace "d" { variables { path "a\\xc3\\xa9b" { capabilities = ["read"] } } }`, {
      Namespaces: [ns("d", "", null, { Paths: [{ PathSpec: "a\u00e9b", Capabilities: ["read", "list"] }] })],
    }],
  ]);
});

Deno.test("nesting deeper than wharf's limit is refused with a reason (Nomad has no limit)", () => {
  const deep = `node { policy = ${"[".repeat(1000)}${"]".repeat(1000)} }`;
  assertEquals(outcome(deep), "Failed to parse ACL Policy: blocks or lists nested deeper than 200");
  const deepJson = `{"node":${"[".repeat(5)}${`{"a":`.repeat(1000)}1${"}".repeat(1000)}]]]]]}`;
  assertEquals(outcome(deepJson), "Failed to parse ACL Policy: objects or lists nested deeper than 200");
});
