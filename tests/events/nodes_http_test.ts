// Node producers over HTTP with ACLs off: register defaults and key order, drain, eligibility, purge, reads.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { call } from "./stream_helpers.ts";
import { assertBodiesRefused, getNode, type Node, register, withServer } from "./nodes_support.ts";

const nodeKeys = [
  "ID",
  "SecretID",
  "Datacenter",
  "Name",
  "CgroupParent",
  "HTTPAddr",
  "TLSEnabled",
  "Attributes",
  "NodeResources",
  "ReservedResources",
  "Resources",
  "Reserved",
  "Links",
  "Meta",
  "NodeClass",
  "NodePool",
  "ComputedClass",
  "DrainStrategy",
  "SchedulingEligibility",
  "Status",
  "StatusDescription",
  "IdentitySigningKeyID",
  "StatusUpdatedAt",
  "Events",
  "Drivers",
  "CSIControllerPlugins",
  "CSINodePlugins",
  "HostVolumes",
  "HostNetworks",
  "GCVolumesOnNodeGC",
  "LastDrain",
  "NodeMaxAllocs",
  "LastMissedHeartbeatIndex",
  "LastAllocUpdateIndex",
  "CreateIndex",
  "ModifyIndex",
  "Drain",
];

withServer("node register fills defaults in key order and answers with the commit index", async (ts) => {
  const r = await call(ts.url, "PUT", "/v1/node/register", { body: { ID: "n1" } });
  assertEquals(r.status, 200);
  const answer = r.json as Record<string, unknown>;
  assertEquals(Object.keys(answer), ["EvalIDs", "EvalCreateIndex", "NodeModifyIndex", "Index"]);
  const index = answer.Index as number;
  assertEquals(answer, { EvalIDs: null, EvalCreateIndex: 0, NodeModifyIndex: index, Index: index });
  assertEquals(r.headers.get("X-Nomad-Index"), String(index));

  const got = await call(ts.url, "GET", "/v1/node/n1");
  assertEquals(got.headers.get("X-Nomad-KnownLeader"), "true");
  assertEquals(got.headers.get("X-Nomad-Index"), String(index));
  const node = got.json as Node;
  assertEquals(Object.keys(node), nodeKeys);
  assertEquals(node.SecretID, "");
  assertEquals(node.Datacenter, "dc1");
  assertEquals(node.Name, "n1");
  assertEquals(node.Status, "initializing");
  assertEquals(node.SchedulingEligibility, "eligible");
  assertEquals(node.NodePool, "default");
  assertEquals(node.Drain, false);
  assertEquals(node.DrainStrategy, null);
  assertEquals(node.Attributes, {});
  assertEquals(node.Drivers, {});
  assertEquals(node.HostVolumes, null);
  assertEquals(node.NodeResources, {
    Cpu: { CpuShares: 0, TotalCpuCores: 0, ReservableCpuCores: null },
    Processors: { Topology: null },
    Memory: { MemoryMB: 0 },
    Disk: { DiskMB: 0 },
    Devices: null,
    NodeNetworks: null,
    Networks: null,
    MinDynamicPort: 20000,
    MaxDynamicPort: 32000,
  });
  assertEquals(node.ReservedResources, {
    Cpu: { CpuShares: 0, ReservedCpuCores: null },
    Memory: { MemoryMB: 0 },
    Disk: { DiskMB: 0 },
    Networks: { ReservedHostPorts: "" },
  });
  assertEquals(node.Resources, { CPU: 0, MemoryMB: 0, DiskMB: 0, IOPS: 0, Networks: null, Devices: null });
  assertMatch(node.ComputedClass as string, /^v1:\d+$/);
  assert(Math.abs((node.StatusUpdatedAt as number) - Date.now() / 1000) < 600);
  assertEquals(node.CreateIndex, index);
  assertEquals(node.ModifyIndex, index);
  assertEquals(node.Events.length, 1);
  assertEquals(Object.keys(node.Events[0]!), ["Message", "Subsystem", "Details", "Timestamp", "CreateIndex"]);
  assertEquals(node.Events[0]!.Message, "Node registered");
  assertEquals(node.Events[0]!.Subsystem, "Cluster");
  assertEquals(node.Events[0]!.CreateIndex, index);
  assertMatch(node.Events[0]!.Timestamp as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

withServer("node register keeps given values, generates an ID, and hides a given SecretID", async (ts) => {
  await register(ts, {
    Node: {
      ID: "given",
      SecretID: "s3cr3t",
      Name: "web-1",
      Datacenter: "eu1",
      Status: "ready",
      Attributes: { "unique.network.ip-address": "10.0.0.5", "nomad.version": "2.0.1" },
      NodeResources: { Cpu: { CpuShares: 4000 }, Networks: [{ Device: "eth0", MBits: 1000 }] },
      Drivers: { docker: { Detected: true, Healthy: true } },
      Unknown: "dropped",
    },
  });
  const node = await getNode(ts, "given");
  assertEquals(node.SecretID, "");
  assertEquals(node.Name, "web-1");
  assertEquals(node.Status, "ready");
  assertEquals((node.NodeResources as { Cpu: unknown }).Cpu, {
    CpuShares: 4000,
    TotalCpuCores: 0,
    ReservableCpuCores: null,
  });
  assertEquals((node.NodeResources as { Networks: unknown[] }).Networks[0], {
    Mode: "",
    Device: "eth0",
    CIDR: "",
    IP: "",
    MBits: 1000,
    DNS: null,
    ReservedPorts: null,
    DynamicPorts: null,
  });
  assertEquals(node.Drivers, {
    docker: {
      Attributes: null,
      Detected: true,
      Healthy: true,
      HealthDescription: "",
      UpdateTime: "0001-01-01T00:00:00Z",
    },
  });
  assert(!("Unknown" in node));
  assert(!JSON.stringify(node).includes("s3cr3t"));

  const r = await call(ts.url, "PUT", "/v1/node/register", { body: { Name: "anon" } });
  assertEquals(r.status, 200);
  const list = (await call(ts.url, "GET", "/v1/nodes")).json as Array<Record<string, unknown>>;
  const generated = list.find((n) => n.Name === "anon")!;
  assertMatch(generated.ID as string, /^[0-9a-f-]{36}$/);
  const stub = list.find((n) => n.ID === "given")!;
  assertEquals(Object.keys(stub), [
    "ID",
    "Address",
    "Datacenter",
    "Name",
    "NodeClass",
    "NodePool",
    "Version",
    "Drain",
    "SchedulingEligibility",
    "Status",
    "StatusDescription",
    "Drivers",
    "HostVolumes",
    "LastDrain",
    "CreateIndex",
    "ModifyIndex",
  ]);
  assertEquals(stub.Address, "10.0.0.5");
  assertEquals(stub.Version, "2.0.1");
});

withServer("node register rejects invalid bodies with Nomad's texts", async (ts) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ ID: "x", Status: "sleeping" }, /^invalid status for node$/],
    [{ ID: "x", SchedulingEligibility: "maybe" }, /^invalid scheduling eligibility "maybe"$/],
    [
      { ID: "x", TLSEnabled: "yes" },
      /^Failed to decode request body: json: cannot unmarshal string into Go struct field Node.TLSEnabled of type bool$/,
    ],
    [
      { ID: "x", NodeResources: { Cpu: { CpuShares: 1.5 } } },
      /^Failed to decode request body: json: cannot unmarshal number 1.5 .* of type int64$/,
    ],
    [{ ID: "x", Meta: { a: 1 } }, /of type string$/],
    [{ ID: "has space" }, /^invalid node ID "has space"/],
    [{ ID: "a".repeat(101) }, /^invalid node ID /],
    [{ ID: "x", NodePool: "a b" }, /^invalid node pool: invalid name "a b", must match regex /],
    [{ ID: "x", NodePool: "all" }, /^node is not allowed to register in node pool "all"$/],
    [[1, 2], /^Failed to decode request body: json: cannot unmarshal array/],
    ["{not json", /^Failed to decode request body: /],
  ];
  await assertBodiesRefused(ts, "/v1/node/register", "/v1/nodes", cases);
});

withServer(
  "node re-registration keeps CreateIndex and drain state and records a re-registered event",
  async (ts) => {
    const first = await register(ts, { ID: "n1" });
    await call(ts.url, "POST", "/v1/node/n1/drain", { body: { DrainSpec: { Deadline: 0 } } });
    const second = await register(ts, { ID: "n1", Status: "ready" });
    assert(second > first);
    const node = await getNode(ts, "n1");
    assertEquals(node.CreateIndex, first);
    assertEquals(node.ModifyIndex, second);
    assertEquals(node.Status, "ready");
    assertEquals(node.Drain, true);
    assertEquals(node.Events.map((e) => e.Message), [
      "Node registered",
      "Node drain strategy set",
      "Node re-registered",
    ]);
  },
);

withServer(
  "node drain sets, updates and disables the strategy with LastDrain and Drain events",
  async (ts) => {
    await register(ts, { ID: "n1" });
    const set = await call(ts.url, "PUT", "/v1/node/n1/drain", {
      body: { DrainSpec: { Deadline: 3600e9, IgnoreSystemJobs: true }, Meta: { reason: "kernel" } },
    });
    assertEquals(set.status, 200);
    const setIndex = (set.json as { Index: number }).Index;
    let node = await getNode(ts, "n1");
    const strategy = node.DrainStrategy as Record<string, unknown>;
    assertEquals(Object.keys(strategy), ["Deadline", "IgnoreSystemJobs", "ForceDeadline", "StartedAt"]);
    assertEquals(strategy.Deadline, 3600e9);
    assertEquals(strategy.IgnoreSystemJobs, true);
    assert(Date.parse(strategy.ForceDeadline as string) > Date.now() + 3000e3);
    assertEquals(node.Drain, true);
    assertEquals(node.SchedulingEligibility, "ineligible");
    assertEquals(node.ModifyIndex, setIndex);
    assertEquals(node.Events.at(-1)!.Message, "Node drain strategy set");
    assertEquals(node.Events.at(-1)!.Subsystem, "Drain");
    const lastDrain = node.LastDrain as Record<string, unknown>;
    assertEquals(Object.keys(lastDrain), ["StartedAt", "UpdatedAt", "Status", "AccessorID", "Meta"]);
    assertEquals(lastDrain.Status, "draining");
    assertEquals(lastDrain.Meta, { reason: "kernel" });

    await call(ts.url, "PUT", "/v1/node/n1/drain", { body: { DrainSpec: { Deadline: 0 } } });
    node = await getNode(ts, "n1");
    assertEquals(node.Events.at(-1)!.Message, "Node drain strategy updated");
    assertEquals((node.DrainStrategy as Record<string, unknown>).StartedAt, strategy.StartedAt);
    assertEquals((node.DrainStrategy as Record<string, unknown>).ForceDeadline, "0001-01-01T00:00:00Z");

    await call(ts.url, "PUT", "/v1/node/n1/drain", { body: { DrainSpec: null, MarkEligible: true } });
    node = await getNode(ts, "n1");
    assertEquals(node.DrainStrategy, null);
    assertEquals(node.Drain, false);
    assertEquals(node.SchedulingEligibility, "eligible");
    assertEquals(node.Events.at(-1)!.Message, "Node drain disabled");
    assertEquals((node.LastDrain as Record<string, unknown>).Status, "canceled");

    const bad = await call(ts.url, "PUT", "/v1/node/n1/drain", { body: { DrainSpec: { Deadline: "1h" } } });
    assertEquals(bad.status, 400);
    assertMatch(
      bad.text,
      /^Failed to decode request body: json: cannot unmarshal string .*Deadline of type int64$/,
    );
  },
);

withServer(
  "node eligibility validates, refuses eligible while draining, and commits nothing when unchanged",
  async (ts) => {
    const registered = await register(ts, { ID: "n1" });
    const same = await call(ts.url, "PUT", "/v1/node/n1/eligibility", { body: { Eligibility: "eligible" } });
    assertEquals(same.status, 200);
    assertEquals((same.json as { Index: number }).Index, registered);
    assertEquals(ts.server.data.log.lastIndex, registered);

    const bad = await call(ts.url, "PUT", "/v1/node/n1/eligibility", { body: { Eligibility: "sometimes" } });
    assertEquals([bad.status, bad.text], [400, `invalid scheduling eligibility "sometimes"`]);

    const off = await call(ts.url, "POST", "/v1/node/n1/eligibility", {
      body: { Eligibility: "ineligible" },
    });
    assertEquals(off.status, 200);
    let node = await getNode(ts, "n1");
    assertEquals(node.SchedulingEligibility, "ineligible");
    assertEquals(node.Events.at(-1)!.Message, "Node marked as ineligible for scheduling");
    assertEquals(node.Events.at(-1)!.Subsystem, "Cluster");

    await call(ts.url, "PUT", "/v1/node/n1/drain", { body: { DrainSpec: { Deadline: 0 } } });
    const refused = await call(ts.url, "PUT", "/v1/node/n1/eligibility", {
      body: { Eligibility: "eligible" },
    });
    assertEquals([refused.status, refused.text], [
      400,
      "can not set node's scheduling eligibility to eligible while it is draining",
    ]);
    await call(ts.url, "PUT", "/v1/node/n1/drain", { body: { DrainSpec: null } });
    await call(ts.url, "PUT", "/v1/node/n1/eligibility", { body: { Eligibility: "eligible" } });
    node = await getNode(ts, "n1");
    assertEquals(node.Events.at(-1)!.Message, "Node marked as eligible for scheduling");
  },
);

withServer("node events keep only the newest 10", async (ts) => {
  await register(ts, { ID: "n1" });
  for (let i = 0; i < 6; i++) {
    await call(ts.url, "PUT", "/v1/node/n1/eligibility", {
      body: { Eligibility: i % 2 ? "eligible" : "ineligible" },
    });
  }
  for (let i = 0; i < 6; i++) await register(ts, { ID: "n1" });
  const node = await getNode(ts, "n1");
  assertEquals(node.Events.length, 10);
  assertEquals(node.Events.at(-1)!.Message, "Node re-registered");
  assert(!node.Events.some((e) => e.Message === "Node registered"));
});

withServer("node purge removes the node; unknown nodes are 404 node not found", async (ts) => {
  await register(ts, { ID: "n1" });
  const purged = await call(ts.url, "POST", "/v1/node/n1/purge");
  assertEquals(purged.status, 200);
  const index = (purged.json as { Index: number }).Index;
  assertEquals(purged.json, { EvalIDs: null, EvalCreateIndex: 0, NodeModifyIndex: index, Index: index });
  for (
    const [method, path, body] of [
      ["GET", "/v1/node/n1", undefined],
      ["PUT", "/v1/node/n1/purge", undefined],
      ["PUT", "/v1/node/n1/drain", { DrainSpec: null }],
      ["PUT", "/v1/node/n1/eligibility", { Eligibility: "eligible" }],
    ] as const
  ) {
    const r = await call(ts.url, method, path, { body });
    assertEquals([r.status, r.text], [404, "node not found"], `${method} ${path}`);
  }
  const list = await call(ts.url, "GET", "/v1/nodes");
  assertEquals(list.json, []);
  assertEquals(list.headers.get("X-Nomad-Index"), String(index));
});

withServer("node register refuses a StatusUpdatedAt no date can hold with 400, not 500", async (ts) => {
  for (const at of [1e17, -1e17, 2 ** 62]) {
    const r = await call(ts.url, "PUT", "/v1/node/register", { body: { ID: "far", StatusUpdatedAt: at } });
    assertEquals(r.status, 400, r.text);
    assertMatch(r.text, /StatusUpdatedAt/);
  }
  assertEquals(await register(ts, { ID: "near", StatusUpdatedAt: 1_700_000_000 }) > 0, true);
});
