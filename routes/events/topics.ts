// The topic table (docs/events.md#streaming-with-curl): which Types each concrete Topic carries, its payload
// member and whether it is namespaced.

const dep = ["DeploymentStatusUpdate", "DeploymentPromotion", "DeploymentAllocHealth"];
const jobTypes = [
  "JobRegistered",
  "JobDeregistered",
  "JobBatchDeregistered",
  "EvaluationUpdated",
  "AllocationUpdated",
  ...dep,
  "PlanResult",
];

export interface TopicInfo {
  payloadMember: string;
  namespaced: boolean;
  types: ReadonlySet<string>;
}

export const topics: ReadonlyMap<string, TopicInfo> = new Map<string, TopicInfo>([
  ["ACLToken", info("ACLToken", false, ["ACLTokenUpserted", "ACLTokenDeleted"])],
  ["ACLPolicy", info("ACLPolicy", false, ["ACLPolicyUpserted", "ACLPolicyDeleted"])],
  ["ACLAuthMethod", info("AuthMethod", false, ["ACLAuthMethodUpserted", "ACLAuthMethodDeleted"])],
  ["ACLBindingRule", info("ACLBindingRule", false, ["ACLBindingRuleUpserted", "ACLBindingRuleDeleted"])],
  ["ACLRole", info("ACLRole", false, ["ACLRoleUpserted", "ACLRoleDeleted"])],
  ["Job", info("Job", true, jobTypes)],
  ["Evaluation", info("Evaluation", true, [...jobTypes, "AllocationUpdateDesiredStatus"])],
  [
    "Allocation",
    info("Allocation", true, [
      "AllocationCreated",
      "AllocationUpdated",
      "AllocationUpdateDesiredStatus",
      ...dep,
      "PlanResult",
    ]),
  ],
  ["Deployment", info("Deployment", true, [...dep, "AllocationUpdated", "PlanResult"])],
  [
    "Node",
    info("Node", false, [
      "NodeRegistration",
      "NodeDeregistration",
      "NodeEligibility",
      "NodeDrain",
      "NodeEvent",
      "PlanResult",
    ]),
  ],
  [
    "AuthMethod",
    info("AuthMethod", false, [
      "AuthMethodCreated",
      "AuthMethodUpdated",
      "AuthMethodDeleted",
      "AuthMethodStateChanged",
    ]),
  ],
  [
    "AuthToken",
    info("AuthToken", false, [
      "AuthTokenIssued",
      "AuthTokenDeleted",
      "AuthenticationFailed",
      "AuthenticationFailuresSummarized",
      "RegistrySignIn",
      "RegistryUserProvisioned",
      "RegistryIdentityLinked",
      "RegistryIdentityUnlinked",
      "RegistryGroupBindingsChanged",
    ]),
  ],
  [
    "ManagedGroup",
    info("ManagedGroup", false, ["ManagedGroupCreated", "ManagedGroupUpdated", "ManagedGroupDeleted"]),
  ],
  ["User", info("User", false, ["UserTwoFactorChanged"])],
  [
    "Box",
    info("Box", false, [
      "BoxCreated",
      "BoxUpdated",
      "BoxDeleted",
      "VersionCreated",
      "VersionUpdated",
      "VersionReleased",
      "VersionRevoked",
      "VersionDeleted",
      "ProviderCreated",
      "ProviderUpdated",
      "ProviderDeleted",
      "ProviderUploaded",
    ]),
  ],
]);

/** Box events carry one of three payload members depending on the object the Type names. */
export function payloadMemberFor(topic: string, type: string): string | undefined {
  if (topic === "Box") {
    if (type.startsWith("Version")) return "Version";
    if (type.startsWith("Provider")) return "Provider";
    return "Box";
  }
  return topics.get(topic)?.payloadMember;
}

/**
 * Topics whose subscription needs a namespace `read-job` grant
 * (docs/events.md#acl-policies-for-stream-readers).
 */
export const namespacedReadJobTopics: ReadonlySet<string> = new Set([
  "Job",
  "Allocation",
  "Deployment",
  "Evaluation",
]);

function info(payloadMember: string, namespaced: boolean, types: string[]): TopicInfo {
  return { payloadMember, namespaced, types: new Set(types) };
}
