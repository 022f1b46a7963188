// The events family's write bodies (ACL, one-time exchange, nodes, jobs, publish, bootstrap) with the JSON type of each known field.

import { type BodyTarget, bounded, f, type FieldType, type WorldIds } from "./targets.ts";

const job = (type: FieldType, name: string, isBounded = false) =>
  isBounded ? bounded(type, "Job", name) : f(type, "Job", name);
const node = (type: FieldType, ...names: string[]) => names.map((n) => f(type, "Node", n));
const event = (type: FieldType, ...names: string[]) => names.map((n) => f(type, "Events", 0, n));

export function eventsBodyTargets(w: WorldIds, freshNodeId: string): BodyTarget[] {
  return [
    {
      method: "PUT",
      path: "/v1/acl/policy/fuzz-policy",
      base: { Name: "fuzz-policy", Description: "d", Rules: 'node { policy = "read" }' },
      fields: [
        f("string", "Name"),
        bounded("string", "Description"),
        f("string", "Rules"),
        f("object", "JobACL"),
      ],
    },
    {
      method: "PUT",
      path: "/v1/acl/token",
      base: { Name: "fuzz-token", Type: "client", Policies: [w.policy] },
      fields: [bounded("string", "Name"), f("string", "Type"), f("array", "Policies"), f("bool", "Global")]
        .concat(f("time", "ExpirationTime"), f("time", "ExpirationTTL"), f("array", "Roles")),
    },
    {
      method: "POST",
      path: `/v1/acl/token/${w.clientAccessor}`,
      base: { AccessorID: w.clientAccessor, Name: "renamed", Type: "client", Policies: [w.policy] },
      fields: [
        f("string", "AccessorID"),
        bounded("string", "Name"),
        f("string", "Type"),
        f("array", "Policies"),
      ]
        .concat(f("bool", "Global")),
    },
    {
      method: "PUT",
      path: "/v1/acl/auth-method",
      base: {
        Name: "fuzz-method",
        Type: "JWT",
        TokenLocality: "local",
        MaxTokenTTL: "1h",
        Config: { JWKSURL: "https://idp.example/jwks", ClaimMappings: { sub: "sub" } },
      },
      fields: [
        bounded("string", "Name"),
        f("string", "Type"),
        f("string", "TokenLocality"),
        f("string", "TokenNameFormat"),
        f("time", "MaxTokenTTL"),
        f("bool", "Default"),
        f("object", "Config"),
        bounded("string", "Config", "JWKSURL"),
        f("array", "Config", "BoundAudiences"),
        f("array", "Config", "JWTValidationPubKeys"),
        f("stringMap", "Config", "ClaimMappings"),
        f("stringMap", "Config", "ListClaimMappings"),
        f("time", "Config", "ClockSkewLeeway"),
        f("bool", "Config", "OIDCEnablePKCE"),
      ],
    },
    {
      method: "PUT",
      path: "/v1/node/register",
      base: { Node: { ID: freshNodeId, Name: "fuzz-node" } },
      // `Node` itself (a non-object Node member) is covered by tests/events/body_edge_test.ts.
      fields: [
        ...node("string", "ID", "Name", "Datacenter", "HTTPAddr", "NodeClass", "NodePool", "Status"),
        ...node("string", "SchedulingEligibility", "CgroupParent"),
        ...node("stringMap", "Attributes", "Meta", "Links"),
        ...node("bool", "TLSEnabled"),
        ...node("object", "Drivers", "NodeResources", "ReservedResources"),
      ],
    },
    {
      method: "POST",
      path: `/v1/node/${w.node}/drain`,
      base: {
        DrainSpec: { Deadline: 3_600_000_000_000, IgnoreSystemJobs: false },
        MarkEligible: false,
        Meta: {},
      },
      fields: [
        f("object", "DrainSpec"),
        f("number", "DrainSpec", "Deadline"),
        f("bool", "DrainSpec", "IgnoreSystemJobs"),
        f("bool", "MarkEligible"),
        f("stringMap", "Meta"),
      ],
    },
    {
      method: "POST",
      path: `/v1/node/${w.node}/eligibility`,
      base: { Eligibility: "ineligible" },
      fields: [f("string", "Eligibility")],
    },
    {
      method: "PUT",
      path: "/v1/jobs",
      base: { Job: { ID: "fuzz-job" } },
      fields: [
        f("object", "Job"),
        ...["ID", "Name", "Type", "Namespace", "Region", "NodePool"].map((n) => job("string", n)),
        job("number", "Priority"),
        job("array", "Datacenters"),
        job("stringMap", "Meta"),
        job("object", "Periodic"),
        job("object", "ParameterizedJob"),
        job("bool", "AllAtOnce"),
        job("bool", "Stop"),
      ],
    },
    {
      method: "POST",
      path: "/v1/event/publish",
      base: {
        Events: [{
          Topic: "Node",
          Type: "NodeEvent",
          Key: "k",
          Namespace: "",
          FilterKeys: null,
          Payload: { Node: {} },
        }],
      },
      fields: [
        f("array", "Events"),
        ...event("string", "Topic", "Type", "Key", "Namespace"),
        ...event("array", "FilterKeys"),
        ...event("object", "Payload"),
      ],
    },
    {
      method: "PUT",
      path: "/v1/acl/token/onetime/exchange",
      // No one-time token has this secret: every body is refused, a wrongly typed one with 400.
      base: { OneTimeSecretID: crypto.randomUUID() },
      fields: [bounded("string", "OneTimeSecretID")],
      failsAnyway: true,
    },
    {
      method: "PUT",
      path: "/v1/acl/bootstrap",
      base: { BootstrapSecret: crypto.randomUUID() },
      fields: [f("string", "BootstrapSecret")],
      failsAnyway: true,
    },
  ];
}
