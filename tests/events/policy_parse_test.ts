// Unit tests of the ACL policy language: HCL and JSON parsing, validation reasons, RulesJSON rendering.

import { assert, assertEquals, assertMatch, assertThrows } from "../helpers/assert.ts";
import { parsePolicy, PolicyError, renderRulesJson } from "../../routes/events/policy.ts";
import { readCaps, scaleCaps } from "./policy_expected.ts";

function reason(rules: string): string {
  const err = assertThrows(() => parsePolicy(rules));
  assert(err instanceof PolicyError, `expected a PolicyError, got ${err}`);
  return err.message;
}

// The "readers" policy of docs/events.md#acl-policies-for-stream-readers.
Deno.test("parsePolicy renders the docs example as RulesJSON with expanded capabilities", () => {
  const rules = `namespace "default" {\n  policy = "read"\n}\nnode {\n  policy = "read"\n}\n`;
  assertEquals(
    JSON.stringify(renderRulesJson(parsePolicy(rules))),
    JSON.stringify({
      Namespaces: [{ Name: "default", Policy: "read", Capabilities: readCaps, Variables: null }],
      NodePools: null,
      HostVolumes: null,
      Agent: null,
      Node: { Policy: "read" },
      Operator: null,
      Quota: null,
      Plugin: null,
    }),
  );
});

Deno.test("parsePolicy accepts JSON rules in object and HCL-JSON array forms as Nomad does", () => {
  const hcl = renderRulesJson(
    parsePolicy(`namespace "default" { policy = "read" }\nnode { policy = "read" }`),
  );
  const objectForm = `{"namespace":{"default":{"policy":"read"}},"node":{"policy":"read"}}`;
  const arrayForm = `  {"namespace":[{"default":{"policy":"read"}}],"node":[{"policy":"read"}]}`;
  assertEquals(renderRulesJson(parsePolicy(objectForm)), hcl);
  assertEquals(renderRulesJson(parsePolicy(arrayForm)), hcl);
  // A list one level deeper leaves the namespace without its label in Nomad's decoder.
  assertEquals(
    reason(`{"namespace":{"default":[{"policy":"read"}]},"node":[{"policy":"read"}]}`),
    `Invalid namespace name: &acl.NamespacePolicy{Name:"", Policy:"read", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}`,
  );
});

Deno.test("parsePolicy handles comments, trailing commas, escapes and one-line blocks", () => {
  const rules = [
    "# hash comment",
    "// slash comment",
    "/* block",
    "   comment */",
    `namespace "a-*" { capabilities = ["read-job", "submit-job",] }`,
    `agent { policy = "read" } operator { policy = "deny" }`,
    `namespace "esc" { policy = "r\\u0065ad" }`,
  ].join("\n");
  const p = parsePolicy(rules);
  assertEquals(p.Namespaces?.map((n) => n.Name), ["a-*", "esc"]);
  assertEquals(p.Namespaces![0]!.Capabilities, ["read-job", "submit-job"]);
  assertEquals(p.Namespaces![1]!.Policy, "read");
  assertEquals(p.Agent, { Policy: "read" });
  assertEquals(p.Operator, { Policy: "deny", Capabilities: ["deny"] });
});

Deno.test("parsePolicy matches keys case-insensitively and accepts blocks written as object assignments", () => {
  const p = parsePolicy(`Namespace "web" { Policy = "write" }\nnode = { policy = "read" }`);
  assertEquals(p.Namespaces![0]!.Policy, "write");
  assertEquals(p.Node, { Policy: "read" });
  const json = parsePolicy(
    `{"Namespace": {"web": {"Variables": [{"Path": {"a/*": {"Capabilities": ["read"]}}}]}}}`,
  );
  assertEquals(json.Namespaces![0]!.Variables, {
    Paths: [{ PathSpec: "a/*", Capabilities: ["read", "list"] }],
  });
});

Deno.test("parsePolicy puts explicit capabilities first, then the policy's expansion, duplicates kept", () => {
  const p = parsePolicy(`namespace "ops" {\n policy = "scale"\n capabilities = ["read-logs", "read-job"]\n}`);
  assertEquals(p.Namespaces![0]!.Capabilities, ["read-logs", "read-job", ...scaleCaps]);
  const deny = parsePolicy(`namespace "x" { policy = "deny" }`);
  assertEquals(deny.Namespaces![0]!.Capabilities, ["deny"]);
  const write = parsePolicy(`namespace "x" { policy = "write" }`).Namespaces![0]!.Capabilities!;
  // 20 from the policy, then host-volume-read implied by host-volume-create.
  assertEquals(write.length, 21);
  assert(write.includes("submit-job") && write.includes("host-volume-create"));
});

Deno.test("parsePolicy validates variables paths and expands read to list", () => {
  const p = parsePolicy(`namespace "dev" {
    variables {
      path "nomad/jobs/*" { capabilities = ["read"] }
      path "secret/*" { capabilities = ["write", "deny"] }
    }
  }`);
  assertEquals(p.Namespaces![0]!.Variables, {
    Paths: [
      { PathSpec: "nomad/jobs/*", Capabilities: ["read", "list"] },
      { PathSpec: "secret/*", Capabilities: ["deny"] },
    ],
  });
  assertEquals(
    reason(`namespace "dev" { variables { } }`),
    "Invalid variable policy: no variable paths in namespace dev",
  );
  // Nomad's text ends with a stray backtick.
  assertEquals(
    reason(`namespace "dev" { variables { path "/abs" { capabilities = ["read"] } } }`),
    `Invalid variable path "/abs" in namespace dev: cannot start with a leading '/'\``,
  );
  assertEquals(
    reason(`namespace "dev" { variables { path "a" { capabilities = ["sudo"] } } }`),
    "Invalid variable capability 'sudo' in namespace dev",
  );
});

Deno.test("parsePolicy accepts the level, plugin, host_volume and node_pool blocks of the table", () => {
  const p = parsePolicy(`
    quota { policy = "write" }
    plugin { policy = "list" }
    host_volume "shared-*" { policy = "write" }
    node_pool "gpu_pool" { capabilities = ["read"] }
  `);
  assertEquals(p.Quota, { Policy: "write" });
  assertEquals(p.Plugin, { Policy: "list" });
  assertEquals(p.HostVolumes, [{
    Name: "shared-*",
    Policy: "write",
    Capabilities: ["mount-readonly", "mount-readwrite"],
  }]);
  assertEquals(p.NodePools, [{ Name: "gpu_pool", Policy: "", Capabilities: ["read"] }]);
});

Deno.test("parsePolicy rejects malformed policies with Nomad's reasons", () => {
  assertEquals(reason("# only a comment\n"), "Invalid policy: # only a comment\n");
  assertEquals(
    reason(`namespace "a" { policy = "read"`),
    "Failed to parse ACL Policy: At 1:33: object expected closing RBRACE got: EOF",
  );
  assertEquals(
    reason(`namespace "a" { policy = read }`),
    "Failed to parse ACL Policy: At 1:26: Unknown token: 1:26 IDENT read",
  );
  assertEquals(
    reason(`namespace "a" { policy = "unterminated }`),
    "Failed to parse ACL Policy: At 1:41: literal not terminated",
  );
  assertEquals(
    reason(`node { policy = "a\\qb" }`),
    "Failed to parse ACL Policy: At 1:20: illegal char escape",
  );
  assertEquals(reason(`/* never closed`), "Failed to parse ACL Policy: At 1:16: comment not terminated");
  assertEquals(reason(`node { policy = "read" } $`), "Failed to parse ACL Policy: At 1:26: illegal char");
  assertEquals(
    reason(`namespace "x" { policy = "bogus" }`),
    `Invalid namespace policy: &acl.NamespacePolicy{Name:"x", Policy:"bogus", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}`,
  );
  assertMatch(reason(`namespace "x" { capabilities = ["fly"] }`), /^Invalid namespace capability 'fly': /);
  assertMatch(reason(`namespace "bad name" { policy = "read" }`), /^Invalid namespace name: /);
  assertMatch(reason(`namespace { policy = "read" }`), /^Invalid namespace name: /);
  assertEquals(reason(`node { }`), `Invalid node policy: &acl.NodePolicy{Policy:""}`);
  assertEquals(
    reason(`plugin { policy = "admin" }`),
    `Invalid plugin policy: &acl.PluginPolicy{Policy:"admin"}`,
  );
  assertEquals(reason(`agent { policy = "list" }`), `Invalid agent policy: &acl.AgentPolicy{Policy:"list"}`);
  assertEquals(
    reason(`node { policy = "read" }\nfoo { policy = "read" }`),
    "Invalid or duplicate policy keys: foo",
  );
  assertEquals(
    reason(`node { policy = "read" }\nnode { policy = "write" }`),
    "Invalid or duplicate policy keys: node",
  );
  assertEquals(
    reason(`node { policy = ["read"] }`),
    "Failed to parse ACL Policy: At 1:17: root.node.Policy: unknown type for string *ast.ListType",
  );
  assertEquals(
    reason(`namespace "a" { capabilities = "read-job" }`),
    "Failed to parse ACL Policy: At 1:32: unknown slice type: *ast.LiteralType",
  );
  assertEquals(
    reason(`host_volume "v" { capabilities = ["fly"] }`).startsWith("Invalid host volume capability 'fly'"),
    true,
  );
  assertEquals(reason(`node_pool "a.b" { policy = "read" }`), "Invalid node pool name 'a.b'");
});

Deno.test("parsePolicy rejects malformed JSON rules with a reason", () => {
  assertEquals(reason(`{"namespace": `), `Invalid policy: {"namespace": `);
  assertEquals(
    reason(`{"node": 5}`),
    "Failed to parse ACL Policy: At -: root.node: not an object type for struct (*ast.LiteralType)",
  );
  assertEquals(
    reason(`{"node": {"policy": "read"}, "bogus": {"policy": "read"}}`),
    "Invalid or duplicate policy keys: bogus",
  );
  assertEquals(reason(`{}`), "Invalid policy: {}");
  assertMatch(reason(`{"namespace": {"default": {"policy": "nope"}}}`), /^Invalid namespace policy: /);
});
