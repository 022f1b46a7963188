// Capability vocabularies of the policy language and the expansion of `policy = "…"` shorthands (spec §8).

const readCapabilities = [
  "list-jobs",
  "parse-job",
  "read-job",
  "csi-list-volume",
  "csi-read-volume",
  "read-job-scaling",
  "list-scaling-policies",
  "read-scaling-policy",
  "host-volume-read",
];

const writeCapabilities = [
  ...readCapabilities,
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
];

const scaleCapabilities = [
  "list-scaling-policies",
  "read-scaling-policy",
  "read-job-scaling",
  "scale-job",
  "read-job",
  "submit-recommendation",
];

/** Every capability a namespace rule may list. */
export const namespaceCapabilities: ReadonlySet<string> = new Set([
  "deny",
  ...writeCapabilities,
  "alloc-node-exec",
  "csi-register-plugin",
  "sentinel-override",
  "host-volume-register",
  "host-volume-write",
  "host-volume-delete",
]);

export const namespacePolicies: ReadonlySet<string> = new Set(["deny", "read", "write", "scale"]);
/** node, agent, operator, quota. */
export const levelPolicies: ReadonlySet<string> = new Set(["deny", "read", "write"]);
export const pluginPolicies: ReadonlySet<string> = new Set(["deny", "list", "read"]);
export const variableCapabilities: ReadonlySet<string> = new Set([
  "read",
  "write",
  "list",
  "destroy",
  "deny",
]);
export const hostVolumeCapabilities: ReadonlySet<string> = new Set([
  "deny",
  "mount",
  "mount-readonly",
  "mount-readwrite",
]);
export const nodePoolCapabilities: ReadonlySet<string> = new Set(["deny", "read", "write", "delete"]);

/** Capabilities a namespace `policy` value stands for. */
export function expandNamespacePolicy(policy: string): string[] {
  switch (policy) {
    case "deny":
      return ["deny"];
    case "read":
      return [...readCapabilities];
    case "write":
      return [...writeCapabilities];
    case "scale":
      return [...scaleCapabilities];
    default:
      return [];
  }
}

/** Host-volume capabilities that imply weaker ones (as Nomad expands them). */
const impliedNamespaceCapabilities: Record<string, string[]> = {
  "host-volume-write": [
    "host-volume-register",
    "host-volume-create",
    "host-volume-delete",
    "host-volume-read",
  ],
  "host-volume-register": ["host-volume-create", "host-volume-read"],
  "host-volume-create": ["host-volume-read"],
};

/** Explicit capabilities, then the policy's expansion, then implied ones; duplicates dropped. */
export function expandNamespaceCapabilities(policy: string, explicit: readonly string[]): string[] {
  const out = [...explicit, ...expandNamespacePolicy(policy)];
  for (const cap of [...out]) out.push(...(impliedNamespaceCapabilities[cap] ?? []));
  return unique(out);
}

export function expandHostVolumeCapabilities(policy: string, explicit: readonly string[]): string[] {
  const byPolicy: Record<string, string[]> = {
    deny: ["deny"],
    read: ["mount-readonly"],
    write: ["mount-readonly", "mount-readwrite"],
  };
  return unique([...explicit, ...(byPolicy[policy] ?? [])]);
}

export function expandNodePoolCapabilities(policy: string, explicit: readonly string[]): string[] {
  const byPolicy: Record<string, string[]> = {
    deny: ["deny"],
    read: ["read"],
    write: ["delete", "read", "write"],
  };
  return unique([...explicit, ...(byPolicy[policy] ?? [])]);
}

/** Variable path capabilities: deny alone wins; read implies list. */
export function expandVariableCapabilities(explicit: readonly string[]): string[] {
  if (explicit.includes("deny")) return ["deny"];
  const out = unique(explicit);
  if (out.includes("read") && !out.includes("list")) out.push("list");
  return out;
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
