// The Job document and its Evaluation (docs/events.md#jobs-and-nodes): decoding with defaults and validation
// texts, stubs, events.

import { ApiError } from "../../lib/errors.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { uuid } from "../../lib/ids.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import { decodeShape, type Shape } from "./nodes_decode.ts";
import { member } from "./nodes_http.ts";

export const jobCollection = "cluster/jobs";

export type JobDoc = Record<string, unknown> & {
  ID: string;
  Namespace: string;
  Name: string;
  Type: string;
  Priority: number;
  Stop: boolean;
  Version: number;
  Periodic: Record<string, unknown> | null;
  ParameterizedJob: Record<string, unknown> | null;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
};

/** Document id: a hash, since job IDs are free text and unique only within a namespace. */
export function jobDocId(namespace: string, id: string): string {
  return sha256Hex(`${namespace}\u0000${id}`);
}

const jobTypes: ReadonlySet<string> = new Set(["service", "batch", "system", "sysbatch"]);
const namespacePattern = /^[a-zA-Z0-9-]{1,128}$/;

/** Nomad's structs.Job field order; fields the request does not give take these defaults. */
const jobFields: readonly (readonly [string, Shape | undefined, unknown])[] = [
  ["Stop", "bool", false],
  ["Region", "string", "global"],
  ["Namespace", "string", ""],
  ["ID", "string", ""],
  ["ParentID", "string", ""],
  ["Name", "string", ""],
  ["Type", "string", "service"],
  ["Priority", "int", 50],
  ["AllAtOnce", "bool", false],
  ["Datacenters", { list: "string", goType: "[]string" }, ["*"]],
  ["NodePool", "string", "default"],
  ["Constraints", undefined, null],
  ["Affinities", undefined, null],
  ["Spreads", undefined, null],
  ["TaskGroups", undefined, null],
  ["Update", undefined, null],
  ["Multiregion", undefined, null],
  ["Periodic", "anyMap", null],
  ["ParameterizedJob", "anyMap", null],
  ["Dispatched", "bool", false],
  ["DispatchIdempotencyToken", "string", ""],
  ["Payload", undefined, null],
  ["Meta", "stringMap", null],
  ["ConsulToken", undefined, ""],
  ["ConsulNamespace", "string", ""],
  ["VaultToken", undefined, ""],
  ["VaultNamespace", "string", ""],
  ["NomadTokenID", undefined, ""],
  ["Status", undefined, "pending"],
  ["StatusDescription", undefined, ""],
  ["Stable", undefined, false],
  ["Version", undefined, 0],
  ["SubmitTime", undefined, 0],
  ["CreateIndex", undefined, 0],
  ["ModifyIndex", undefined, 0],
  ["JobModifyIndex", undefined, 0],
];

/** Fields the server owns or that would carry secrets: never taken from the request. */
const serverFields = new Set([
  "ConsulToken",
  "VaultToken",
  "NomadTokenID",
  "Status",
  "StatusDescription",
  "Stable",
  "Version",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
]);

/**
 * Decodes the Job of a register request: known fields type-checked and defaulted in Nomad's order, other
 * given fields kept as given after them. `queryNamespace` applies when the job names none.
 */
export function decodeJob(body: Record<string, unknown>, queryNamespace: string | null): JobDoc {
  const raw = member(body, "Job");
  if (raw === undefined || raw === null) throw new ApiError(400, "Job must be specified");
  if (typeof raw !== "object" || Array.isArray(raw)) {
    const kind = Array.isArray(raw) ? "array" : typeof raw;
    throw new ApiError(
      400,
      `Failed to decode request body: json: cannot unmarshal ${kind} into Go struct field JobRegisterRequest.Job of type api.Job`,
    );
  }
  const given = raw as Record<string, unknown>;
  const known = new Set(jobFields.map(([name]) => name.toLowerCase()));
  const job: Record<string, unknown> = {};
  for (const [name, shape, fallback] of jobFields) {
    const value = serverFields.has(name) ? undefined : member(given, name);
    if (value === undefined || value === null) job[name] = structuredClone(fallback);
    else job[name] = shape ? decodeShape(shape, value, `Job.${name}`) : structuredClone(value);
  }
  for (const [key, value] of Object.entries(given)) {
    // defineProperty keeps even a "__proto__" key as plain data.
    if (!known.has(key.toLowerCase())) {
      Object.defineProperty(job, key, {
        value: structuredClone(value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  const doc = job as JobDoc;
  if (doc.Namespace === "") doc.Namespace = queryNamespace || "default";
  validateJob(doc);
  return doc;
}

function validateJob(job: JobDoc): void {
  if (job.ID === "") throw new ApiError(400, "Missing job ID");
  if (/\s/.test(job.ID)) throw new ApiError(400, "Job ID contains a space");
  if (job.ID.includes("\u0000")) throw new ApiError(400, "Job ID contains a null character");
  // A lone surrogate would be stored as U+FFFD (the document key hashes UTF-8) and collide with that spelling.
  if (!job.ID.isWellFormed()) {
    throw new ApiError(400, "Job ID contains an unpaired surrogate (invalid Unicode)");
  }
  if (job.Name === "") job.Name = job.ID;
  if (job.Name.includes("\u0000")) throw new ApiError(400, "Job Name contains a null character");
  if (!namespacePattern.test(job.Namespace)) {
    throw new ApiError(400, `Invalid namespace ${JSON.stringify(job.Namespace)}`);
  }
  if (job.Region === "") job.Region = "global";
  if (job.NodePool === "") job.NodePool = "default";
  if ((job.Datacenters as string[]).length === 0) job.Datacenters = ["*"];
  if (!jobTypes.has(job.Type)) throw new ApiError(400, `Invalid job type: ${JSON.stringify(job.Type)}`);
  if (job.Priority < 1 || job.Priority > 100) {
    throw new ApiError(400, "Job priority must be between [1, 100]");
  }
}

/** Periodic (enabled) and parameterized jobs get no evaluation: they only run when launched. */
export function launchesEvaluation(job: JobDoc): boolean {
  const periodic = job.Periodic !== null && job.Periodic.Enabled !== false;
  return !periodic && job.ParameterizedJob === null;
}

export function renderJobStub(job: JobDoc): Record<string, unknown> {
  return {
    ID: job.ID,
    ParentID: job.ParentID,
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job.NodePool,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: job.Periodic !== null,
    ParameterizedJob: job.ParameterizedJob !== null,
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription,
    SubmitTime: job.SubmitTime,
    Meta: job.Meta,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
  };
}

/** A pending evaluation for `job`, created at `index` (never stored: wharf has no scheduler). */
export function newEvaluation(
  job: JobDoc,
  triggeredBy: "job-register" | "job-deregister",
  index: number,
  nowNs: number,
): Record<string, unknown> {
  return {
    ID: uuid(),
    Namespace: job.Namespace,
    Priority: job.Priority,
    Type: job.Type,
    TriggeredBy: triggeredBy,
    JobID: job.ID,
    JobModifyIndex: job.JobModifyIndex,
    NodeID: "",
    NodeModifyIndex: 0,
    DeploymentID: "",
    Status: "pending",
    StatusDescription: "",
    Wait: 0,
    WaitUntil: "0001-01-01T00:00:00Z",
    NextEval: "",
    PreviousEval: "",
    BlockedEval: "",
    RelatedEvals: null,
    FailedTGAllocs: null,
    ClassEligibility: null,
    QuotaLimitReached: "",
    EscapedComputedClass: false,
    AnnotatePlan: false,
    QueuedAllocations: null,
    SnapshotIndex: 0,
    CreateIndex: index,
    ModifyIndex: index,
    CreateTime: nowNs,
    ModifyTime: nowNs,
  };
}

export function jobEvent(type: "JobRegistered" | "JobDeregistered", job: JobDoc): EventInput {
  return {
    Topic: "Job",
    Type: type,
    Key: job.ID,
    Namespace: job.Namespace,
    FilterKeys: null,
    Payload: { Job: job },
  };
}

export function evaluationEvent(
  type: "JobRegistered" | "JobDeregistered",
  evaluation: Record<string, unknown>,
): EventInput {
  return {
    Topic: "Evaluation",
    Type: type,
    Key: evaluation.ID as string,
    Namespace: evaluation.Namespace as string,
    FilterKeys: [evaluation.JobID as string, evaluation.DeploymentID as string],
    Payload: { Evaluation: evaluation },
  };
}

/** Unix nanoseconds (millisecond resolution, which is all Date offers). */
export function nowNanos(): number {
  return Date.now() * 1_000_000;
}
