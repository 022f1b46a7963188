// The Node document (docs/events.md#jobs-and-nodes): field layout with registration defaults, ComputedClass,
// stubs.

import { decodeStruct, type Field, type Shape } from "./nodes_decode.ts";

export const nodeCollection = "cluster/nodes";

export const nodeStatuses: ReadonlySet<string> = new Set(["initializing", "ready", "down", "disconnected"]);
export const eligibilities: ReadonlySet<string> = new Set(["eligible", "ineligible"]);

/** Go's zero time, as Nomad renders an unset time.Time. */
export const zeroTime = "0001-01-01T00:00:00Z";

function struct(name: string, fields: readonly Field[]): Shape {
  return { struct: name, fields };
}

/** A struct's value when absent: every field at its default. */
function defaults(shape: Shape): Record<string, unknown> {
  if (typeof shape === "string" || !("struct" in shape)) {
    throw new TypeError("defaults() needs a struct shape");
  }
  return decodeStruct(shape.fields, {}, shape.struct);
}

const listOf = (shape: Shape, goType: string): Shape => ({ list: shape, goType });
const mapOf = (shape: Shape, goType: string): Shape => ({ mapOf: shape, goType });

const address = struct("NodeNetworkAddress", [
  ["Family", "string", ""],
  ["Alias", "string", ""],
  ["Address", "string", ""],
  ["ReservedPorts", "string", ""],
  ["Gateway", "string", ""],
]);

const nodeNetwork = struct("NodeNetworkResource", [
  ["Mode", "string", ""],
  ["Device", "string", ""],
  ["MacAddress", "string", ""],
  ["Speed", "int", 0],
  ["Addresses", listOf(address, "[]structs.NodeNetworkAddress"), null],
]);

const network = struct("NetworkResource", [
  ["Mode", "string", ""],
  ["Device", "string", ""],
  ["CIDR", "string", ""],
  ["IP", "string", ""],
  ["MBits", "int", 0],
  ["DNS", "any", null],
  ["ReservedPorts", "any", null],
  ["DynamicPorts", "any", null],
]);
const networks = listOf(network, "structs.Networks");

const nodeResources = struct("NodeResources", [
  [
    "Cpu",
    struct("NodeCpuResources", [
      ["CpuShares", "int", 0],
      ["TotalCpuCores", "int", 0],
      ["ReservableCpuCores", listOf("int", "[]uint16"), null],
    ]),
    { CpuShares: 0, TotalCpuCores: 0, ReservableCpuCores: null },
  ],
  ["Processors", struct("NodeProcessorResources", [["Topology", "any", null]]), { Topology: null }],
  ["Memory", struct("NodeMemoryResources", [["MemoryMB", "int", 0]]), { MemoryMB: 0 }],
  ["Disk", struct("NodeDiskResources", [["DiskMB", "int", 0]]), { DiskMB: 0 }],
  ["Devices", "any", null],
  ["NodeNetworks", listOf(nodeNetwork, "[]*structs.NodeNetworkResource"), null],
  ["Networks", networks, null],
  ["MinDynamicPort", "int", 20000],
  ["MaxDynamicPort", "int", 32000],
]);

const reservedResources = struct("NodeReservedResources", [
  [
    "Cpu",
    struct("NodeReservedCpuResources", [
      ["CpuShares", "int", 0],
      ["ReservedCpuCores", listOf("int", "[]uint16"), null],
    ]),
    { CpuShares: 0, ReservedCpuCores: null },
  ],
  ["Memory", struct("NodeReservedMemoryResources", [["MemoryMB", "int", 0]]), { MemoryMB: 0 }],
  ["Disk", struct("NodeReservedDiskResources", [["DiskMB", "int", 0]]), { DiskMB: 0 }],
  [
    "Networks",
    struct("NodeReservedNetworkResources", [["ReservedHostPorts", "string", ""]]),
    { ReservedHostPorts: "" },
  ],
]);

const legacyResources = struct("Resources", [
  ["CPU", "int", 0],
  ["MemoryMB", "int", 0],
  ["DiskMB", "int", 0],
  ["IOPS", "int", 0],
  ["Networks", networks, null],
  ["Devices", "any", null],
]);

export const drainStrategyShape = struct("DrainStrategy", [
  ["Deadline", "int", 0],
  ["IgnoreSystemJobs", "bool", false],
  ["ForceDeadline", "string", zeroTime],
  ["StartedAt", "string", zeroTime],
]);

const driverInfo = struct("DriverInfo", [
  ["Attributes", "stringMap", null],
  ["Detected", "bool", false],
  ["Healthy", "bool", false],
  ["HealthDescription", "string", ""],
  ["UpdateTime", "string", zeroTime],
]);

const hostVolume = struct("ClientHostVolumeConfig", [
  ["Name", "string", ""],
  ["Path", "string", ""],
  ["ReadOnly", "bool", false],
  ["ID", "string", ""],
]);

const nodeEvent = struct("NodeEvent", [
  ["Message", "string", ""],
  ["Subsystem", "string", ""],
  ["Details", "stringMap", null],
  ["Timestamp", "string", zeroTime],
  ["CreateIndex", "int", 0],
]);

const lastDrain = struct("DrainMetadata", [
  ["StartedAt", "string", zeroTime],
  ["UpdatedAt", "string", zeroTime],
  ["Status", "string", ""],
  ["AccessorID", "string", ""],
  ["Meta", "stringMap", null],
]);

/**
 * Every Node field in output order. ID, SecretID, ComputedClass, StatusUpdatedAt, the indexes and Drain
 * are filled by the register handler; the defaults here are the rest of the registration defaults.
 */
export const nodeFields: readonly Field[] = [
  ["ID", "string", ""],
  ["SecretID", "string", ""],
  ["Datacenter", "string", "dc1"],
  ["Name", "string", ""],
  ["CgroupParent", "string", ""],
  ["HTTPAddr", "string", ""],
  ["TLSEnabled", "bool", false],
  ["Attributes", "stringMap", {}],
  ["NodeResources", nodeResources, defaults(nodeResources)],
  ["ReservedResources", reservedResources, defaults(reservedResources)],
  ["Resources", legacyResources, defaults(legacyResources)],
  ["Reserved", legacyResources, defaults(legacyResources)],
  ["Links", "stringMap", {}],
  ["Meta", "stringMap", {}],
  ["NodeClass", "string", ""],
  ["NodePool", "string", "default"],
  ["ComputedClass", "string", ""],
  ["DrainStrategy", drainStrategyShape, null],
  ["SchedulingEligibility", "string", "eligible"],
  ["Status", "string", "initializing"],
  ["StatusDescription", "string", ""],
  ["IdentitySigningKeyID", "string", ""],
  ["StatusUpdatedAt", "int", 0],
  ["Events", listOf(nodeEvent, "[]*structs.NodeEvent"), null],
  ["Drivers", mapOf(driverInfo, "map[string]*structs.DriverInfo"), {}],
  ["CSIControllerPlugins", "anyMap", null],
  ["CSINodePlugins", "anyMap", null],
  ["HostVolumes", mapOf(hostVolume, "map[string]*structs.ClientHostVolumeConfig"), null],
  ["HostNetworks", "anyMap", null],
  ["GCVolumesOnNodeGC", "bool", false],
  ["LastDrain", lastDrain, null],
  ["NodeMaxAllocs", "int", 0],
  ["LastMissedHeartbeatIndex", "int", 0],
  ["LastAllocUpdateIndex", "int", 0],
  ["CreateIndex", "int", 0],
  ["ModifyIndex", "int", 0],
  ["Drain", "bool", false],
];

export type NodeDoc = Record<string, unknown> & {
  ID: string;
  Attributes: Record<string, string>;
  Meta: Record<string, string>;
  DrainStrategy: Record<string, unknown> | null;
  SchedulingEligibility: string;
  Events: NodeEventDoc[] | null;
  LastDrain: Record<string, unknown> | null;
  CreateIndex: number;
  ModifyIndex: number;
};

export interface NodeEventDoc {
  Message: string;
  Subsystem: string;
  Details: Record<string, string> | null;
  Timestamp: string;
  CreateIndex: number;
}

/** Nomad keeps the newest 10 node events. */
export const maxNodeEvents = 10;

export function appendNodeEvent(node: NodeDoc, event: NodeEventDoc): void {
  const events = [...(node.Events ?? []), event];
  node.Events = events.slice(-maxNodeEvents);
}

/**
 * `v1:<digits>`: a stable FNV-1a 64 hash of what makes nodes interchangeable for scheduling. Attributes and
 * Meta keys starting with "unique." are left out, as in Nomad, so identical machines share a class.
 */
export function computedClass(node: NodeDoc): string {
  const pick = (m: Record<string, string>) =>
    Object.keys(m).filter((k) => !k.startsWith("unique.")).sort().map((k) => [k, m[k]]);
  const canonical = JSON.stringify([
    node.Datacenter,
    node.NodeClass,
    node.NodePool,
    pick(node.Attributes ?? {}),
    pick(node.Meta ?? {}),
  ]);
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(canonical)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `v1:${hash.toString()}`;
}

/** The node as served: SecretID blanked, Drain derived. */
export function renderNode(node: NodeDoc): NodeDoc {
  return { ...node, SecretID: "", Drain: node.DrainStrategy !== null };
}

/** The stub of GET /v1/nodes. */
export function renderNodeStub(node: NodeDoc): Record<string, unknown> {
  return {
    ID: node.ID,
    Address: node.Attributes?.["unique.network.ip-address"] ?? "",
    Datacenter: node.Datacenter,
    Name: node.Name,
    NodeClass: node.NodeClass,
    NodePool: node.NodePool,
    Version: node.Attributes?.["nomad.version"] ?? "",
    Drain: node.DrainStrategy !== null,
    SchedulingEligibility: node.SchedulingEligibility,
    Status: node.Status,
    StatusDescription: node.StatusDescription,
    Drivers: node.Drivers,
    HostVolumes: node.HostVolumes,
    LastDrain: node.LastDrain,
    CreateIndex: node.CreateIndex,
    ModifyIndex: node.ModifyIndex,
  };
}
