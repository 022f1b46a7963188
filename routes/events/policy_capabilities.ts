// Capability vocabularies of the policy language and the expansion of `policy = "…"` shorthands, as Nomad
// (v1.11) defines them. Expansions append to the explicit list and keep duplicates, as Nomad's RulesJSON shows
// them; merging into an ACL works on sets.

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
  // Fine-grained job, deployment and allocation capabilities (Nomad 1.10+).
  "register-job",
  "revert-job",
  "deregister-job",
  "purge-job",
  "evaluate-job",
  "plan-job",
  "tag-job-version",
  "stable-job",
  "fail-deployment",
  "pause-deployment",
  "promote-deployment",
  "unblock-deployment",
  "cancel-deployment",
  "set-alloc-health-deployment",
  "gc-allocation",
  "pause-allocation",
  "force-periodic-job",
  "delete-service-registration",
]);

/** `policy` values of namespace, node pool, host volume, agent, node, operator and quota rules. */
export const policyLevels: ReadonlySet<string> = new Set(["deny", "read", "write", "scale"]);
export const pluginPolicies: ReadonlySet<string> = new Set(["deny", "read", "list", "write"]);
export const variableCapabilities: ReadonlySet<string> = new Set([
  "write",
  "read",
  "list",
  "destroy",
  "deny",
]);
export const hostVolumeCapabilities: ReadonlySet<string> = new Set([
  "deny",
  "mount-readonly",
  "mount-readwrite",
]);
export const nodePoolCapabilities: ReadonlySet<string> = new Set(["delete", "read", "write", "deny"]);
export const operatorCapabilities: ReadonlySet<string> = new Set([
  "deny",
  "snapshot-save",
  "keyring-rotate",
  "keyring-read",
  "keyring-delete",
  "license-read",
]);
export const sentinelCapabilities: ReadonlySet<string> = new Set([
  "deny",
  "sentinel-read",
  "sentinel-submit",
  "sentinel-delete",
]);

/** Capabilities a namespace `policy` value stands for (none for an unknown value). */
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

/** Host-volume capabilities that imply weaker ones. */
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

/** The implied capabilities of `caps`, in order (appended after them by the caller). */
export function impliedCapabilities(caps: readonly string[]): string[] {
  return caps.flatMap((c) =>
    Object.hasOwn(impliedNamespaceCapabilities, c) ? impliedNamespaceCapabilities[c]! : []
  );
}

type LevelExpansion = { deny: string[]; read: string[]; write: string[] };

function byLevel(table: LevelExpansion, policy: string): string[] {
  return policy === "deny" || policy === "read" || policy === "write" ? [...table[policy]] : [];
}

export function expandNodePoolPolicy(policy: string): string[] {
  return byLevel({ deny: ["deny"], read: ["read"], write: ["delete", "read", "write"] }, policy);
}

export function expandHostVolumePolicy(policy: string): string[] {
  return byLevel(
    { deny: ["deny"], read: ["mount-readonly"], write: ["mount-readonly", "mount-readwrite"] },
    policy,
  );
}

export function expandOperatorPolicy(policy: string): string[] {
  return byLevel({
    deny: ["deny"],
    read: ["license-read", "keyring-read"],
    write: ["snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"],
  }, policy);
}

export function expandSentinelPolicy(policy: string): string[] {
  return byLevel({
    deny: ["deny"],
    read: ["sentinel-read"],
    write: ["sentinel-read", "sentinel-submit", "sentinel-delete"],
  }, policy);
}

/**
 * Variable path capabilities: `deny` anywhere leaves only deny; `read` without `list` adds `list`. Keeps
 * null (no capabilities given) as null.
 */
export function expandVariableCapabilities(caps: readonly string[] | null): string[] | null {
  if (caps === null) return null;
  if (caps.includes("deny")) return ["deny"];
  if (caps.includes("read") && !caps.includes("list")) return [...caps, "list"];
  return [...caps];
}
