// Node state transitions (register, drain, eligibility): pure functions from the stored node and the request
// to the new node, with the node events Nomad records for each.

import { ApiError } from "../../lib/errors.ts";
import { uuid } from "../../lib/ids.ts";
import { decodeShape, decodeStruct } from "./nodes_decode.ts";
import {
  appendNodeEvent,
  computedClass,
  eligibilities,
  type NodeDoc,
  nodeFields,
  nodeStatuses,
  zeroTime,
} from "./nodes_model.ts";
import { member, rfc3339, rfc3339Seconds } from "./nodes_http.ts";

// At most 100 bytes so that any ID, even one stored under a hex file name, fits the document store.
const nodePoolPattern = /^[a-zA-Z0-9-_]{1,128}$/;
const nodeIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;
const maxUnixSeconds = 8.64e12;

export function invalidEligibility(value: unknown): ApiError {
  return new ApiError(
    400,
    `invalid scheduling eligibility ${JSON.stringify(typeof value === "string" ? value : "")}`,
  );
}

/** Decodes a register body (a Node, or `{"Node":{…}}`) into a node with registration defaults. */
export function decodeRegistration(body: Record<string, unknown>, now: number): NodeDoc {
  const wrapped = member(body, "Node");
  if (wrapped !== undefined && wrapped !== null && (typeof wrapped !== "object" || Array.isArray(wrapped))) {
    const got = Array.isArray(wrapped) ? "array" : typeof wrapped === "string" ? "string" : typeof wrapped;
    throw new ApiError(
      400,
      `Failed to decode request body: json: cannot unmarshal ${got} into Go struct field NodeRegisterRequest.Node of type structs.Node`,
    );
  }
  const raw = typeof wrapped === "object" && wrapped !== null && !Array.isArray(wrapped)
    ? wrapped as Record<string, unknown>
    : body;
  const node = decodeStruct(nodeFields, raw, "Node") as NodeDoc;
  if (node.ID === "") node.ID = uuid();
  if (!nodeIdPattern.test(node.ID)) {
    throw new ApiError(
      400,
      `invalid node ID ${JSON.stringify(node.ID)}: use up to 100 letters, digits, '.', '_', ':' or '-'`,
    );
  }
  node.SecretID = "";
  if (node.Name === "") node.Name = node.ID;
  if (node.Datacenter === "") node.Datacenter = "dc1";
  if (node.NodePool === "") node.NodePool = "default";
  if (!nodePoolPattern.test(node.NodePool as string)) {
    throw new ApiError(
      400,
      `invalid node pool: invalid name ${
        JSON.stringify(node.NodePool)
      }, must match regex ${nodePoolPattern.source}`,
    );
  }
  if (node.NodePool === "all") throw new ApiError(400, `node is not allowed to register in node pool "all"`);
  if (node.Status === "") node.Status = "initializing";
  if (!nodeStatuses.has(node.Status as string)) throw new ApiError(400, "invalid status for node");
  if (node.SchedulingEligibility === "") node.SchedulingEligibility = "eligible";
  if (!eligibilities.has(node.SchedulingEligibility)) throw invalidEligibility(node.SchedulingEligibility);
  if (node.StatusUpdatedAt === 0) node.StatusUpdatedAt = Math.floor(now / 1000);
  // The register event's Timestamp is rendered from it: refuse what no date can hold (±8.64e12 s).
  if (Math.abs(node.StatusUpdatedAt as number) > maxUnixSeconds) {
    throw new ApiError(400, `invalid StatusUpdatedAt ${node.StatusUpdatedAt}: out of range`);
  }
  // A drain given at registration makes the node ineligible, as Nomad's register does.
  if (node.DrainStrategy) node.SchedulingEligibility = "ineligible";
  node.ComputedClass = computedClass(node);
  return node;
}

/**
 * The stored node after (re-)registration at `index`: a new node starts its event list; a known one keeps
 * CreateIndex, its events (plus "Node re-registered"), drain state and eligibility.
 */
export function registerNode(node: NodeDoc, existing: NodeDoc | undefined, index: number): NodeDoc {
  const out: NodeDoc = { ...node, ModifyIndex: index };
  const timestamp = rfc3339Seconds((node.StatusUpdatedAt as number) * 1000);
  if (existing) {
    out.CreateIndex = existing.CreateIndex;
    out.Events = existing.Events;
    out.DrainStrategy = existing.DrainStrategy;
    out.SchedulingEligibility = existing.SchedulingEligibility;
    out.LastDrain = existing.LastDrain;
    appendNodeEvent(out, {
      Message: "Node re-registered",
      Subsystem: "Cluster",
      Details: null,
      Timestamp: timestamp,
      CreateIndex: index,
    });
  } else {
    out.CreateIndex = index;
    out.Events = [{
      Message: "Node registered",
      Subsystem: "Cluster",
      Details: null,
      Timestamp: timestamp,
      CreateIndex: index,
    }];
  }
  out.Drain = out.DrainStrategy !== null;
  return out;
}

export interface DrainRequest {
  spec: { Deadline: number; IgnoreSystemJobs: boolean } | null;
  markEligible: boolean;
  meta: Record<string, string> | null;
}

export function decodeDrainRequest(body: Record<string, unknown>): DrainRequest {
  const rawSpec = member(body, "DrainSpec");
  const spec = rawSpec === undefined || rawSpec === null ? null : decodeShape(
    {
      struct: "DrainSpec",
      fields: [["Deadline", "int", 0], ["IgnoreSystemJobs", "bool", false]],
    },
    rawSpec,
    "NodeUpdateDrainRequest.DrainSpec",
  ) as DrainRequest["spec"];
  const rawMark = member(body, "MarkEligible");
  const markEligible = rawMark === undefined || rawMark === null
    ? false
    : decodeShape("bool", rawMark, "NodeUpdateDrainRequest.MarkEligible") as boolean;
  const rawMeta = member(body, "Meta");
  const meta = rawMeta === undefined || rawMeta === null
    ? null
    : decodeShape("stringMap", rawMeta, "NodeUpdateDrainRequest.Meta") as Record<string, string>;
  return { spec, markEligible, meta };
}

/** The node after a drain update at `index` by `accessorId`. */
export function drainNode(
  node: NodeDoc,
  request: DrainRequest,
  accessorId: string,
  index: number,
  now: number,
): NodeDoc {
  const out: NodeDoc = { ...node, ModifyIndex: index };
  const wasDraining = node.DrainStrategy !== null;
  const at = rfc3339Seconds(now);
  let message: string | undefined;
  if (request.spec) {
    out.DrainStrategy = {
      Deadline: request.spec.Deadline,
      IgnoreSystemJobs: request.spec.IgnoreSystemJobs,
      ForceDeadline: request.spec.Deadline > 0 ? rfc3339(now + request.spec.Deadline / 1e6) : zeroTime,
      StartedAt: wasDraining ? node.DrainStrategy!.StartedAt : rfc3339(now),
    };
    out.SchedulingEligibility = "ineligible";
    message = wasDraining ? "Node drain strategy updated" : "Node drain strategy set";
    out.LastDrain = wasDraining && node.LastDrain
      ? { ...node.LastDrain, UpdatedAt: at, Status: "draining", AccessorID: accessorId, Meta: request.meta }
      : { StartedAt: at, UpdatedAt: at, Status: "draining", AccessorID: accessorId, Meta: request.meta };
  } else {
    out.DrainStrategy = null;
    if (request.markEligible) out.SchedulingEligibility = "eligible";
    if (wasDraining) {
      message = "Node drain disabled";
      out.LastDrain = {
        ...(node.LastDrain ?? { StartedAt: at }),
        UpdatedAt: at,
        Status: "canceled",
        AccessorID: accessorId,
        Meta: request.meta,
      };
    }
  }
  if (message) {
    appendNodeEvent(out, {
      Message: message,
      Subsystem: "Drain",
      Details: null,
      Timestamp: rfc3339(now),
      CreateIndex: index,
    });
  }
  out.Drain = out.DrainStrategy !== null;
  return out;
}

/** The node with a new eligibility at `index`; throws 400 when eligible is asked while draining. */
export function setEligibility(node: NodeDoc, eligibility: string, index: number, now: number): NodeDoc {
  if (eligibility === "eligible" && node.DrainStrategy !== null) {
    throw new ApiError(400, "can not set node's scheduling eligibility to eligible while it is draining");
  }
  const out: NodeDoc = { ...node, SchedulingEligibility: eligibility, ModifyIndex: index };
  appendNodeEvent(out, {
    Message: `Node marked as ${eligibility} for scheduling`,
    Subsystem: "Cluster",
    Details: null,
    Timestamp: rfc3339(now),
    CreateIndex: index,
  });
  return out;
}
