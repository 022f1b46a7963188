// Job endpoints (docs/events.md#jobs-and-nodes): register, deregister (stop or purge), list and read. A write
// commits the job and its Job + Evaluation events (Job first) as one batch whose Index stamps the job's
// indexes.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { CommitPlan, EventInput } from "../../lib/store/mod.ts";
import {
  decodeJob,
  evaluationEvent,
  jobCollection,
  type JobDoc,
  jobDocId,
  jobEvent,
  launchesEvaluation,
  newEvaluation,
  nowNanos,
  renderJobStub,
} from "./jobs_model.ts";
import { applyListFilter } from "./list_filter.ts";
import {
  permissionDenied,
  readObjectBody,
  readResponse,
  type ResolveCaller,
  TableIndex,
  writeResponse,
} from "./nodes_http.ts";

const jobNotFound = () => new ApiError(404, "job not found");

/** `?namespace=`: absent or empty → default; only the first occurrence counts. */
function queryNamespace(req: RequestContext): string {
  return req.url.searchParams.get("namespace") || "default";
}

/** The routes, and `close` to stop following the collection (the store outlives a module in tests). */
export function jobRoutes(ctx: AppContext, resolveCaller: ResolveCaller): ApiModule {
  const store = ctx.data.store;
  const table = new TableIndex();
  for (const j of store.list(jobCollection)) table.bump(j.index);
  const unwatch = store.watch(jobCollection, (change) => table.bump(change.index));
  const current = (ns: string, id: string) => store.get<JobDoc>(jobCollection, jobDocId(ns, id))?.doc;

  async function requireCapability(req: RequestContext, ns: string, capability: string): Promise<void> {
    const caller = await resolveCaller(req);
    if (!caller.acl.allowNamespace(ns, capability)) throw permissionDenied();
  }

  async function register(req: RequestContext): Promise<Response> {
    const caller = await resolveCaller(req);
    const job = decodeJob(await readObjectBody(req), req.url.searchParams.get("namespace"));
    if (!caller.acl.allowNamespace(job.Namespace, "submit-job")) throw permissionDenied();
    const docId = jobDocId(job.Namespace, job.ID);
    const { index, result } = await store.transact([`${jobCollection}/${docId}`], () => {
      const existing = current(job.Namespace, job.ID);
      return (index: number) => {
        const stored: JobDoc = {
          ...job,
          Version: existing ? existing.Version + 1 : 0,
          SubmitTime: nowNanos(),
          CreateIndex: existing ? existing.CreateIndex : index,
          ModifyIndex: index,
          JobModifyIndex: index,
        };
        const evaluation = launchesEvaluation(stored)
          ? newEvaluation(stored, "job-register", index, stored.SubmitTime as number)
          : undefined;
        return jobCommit("JobRegistered", docId, stored, stored, evaluation);
      };
    });
    return writeResponse({
      EvalID: result,
      EvalCreateIndex: result ? index : 0,
      JobModifyIndex: index,
      Warnings: "",
      Index: index,
    }, index);
  }

  async function deregister(req: RequestContext): Promise<Response> {
    const ns = queryNamespace(req);
    await requireCapability(req, ns, "submit-job");
    const id = req.params.id!;
    const purge = req.url.searchParams.get("purge") === "true";
    const docId = jobDocId(ns, id);
    const { index, result } = await store.transact([`${jobCollection}/${docId}`], () => {
      const existing = current(ns, id);
      if (!existing) throw jobNotFound();
      return (index: number) => {
        // A purge's event carries the last stored state; a stop stores and sends the stopped job.
        const job: JobDoc = purge ? existing : {
          ...existing,
          Stop: true,
          Status: "dead",
          Version: existing.Version + 1,
          ModifyIndex: index,
          JobModifyIndex: index,
        };
        const evaluation = launchesEvaluation(job)
          ? newEvaluation({ ...job, JobModifyIndex: index }, "job-deregister", index, nowNanos())
          : undefined;
        return jobCommit("JobDeregistered", docId, purge ? null : job, job, evaluation);
      };
    });
    return writeResponse({
      EvalID: result,
      EvalCreateIndex: result ? index : 0,
      JobModifyIndex: index,
      Index: index,
    }, index);
  }

  async function list(req: RequestContext): Promise<Response> {
    const caller = await resolveCaller(req);
    const ns = queryNamespace(req);
    const prefix = req.url.searchParams.get("prefix") ?? "";
    let visible: (job: JobDoc) => boolean;
    if (ns === "*") {
      // All namespaces: each job shows only where the caller may list jobs.
      visible = (job) => caller.acl.allowNamespace(job.Namespace, "list-jobs");
    } else {
      if (!caller.acl.allowNamespace(ns, "list-jobs")) throw permissionDenied();
      visible = (job) => job.Namespace === ns;
    }
    const jobs = [...store.list<JobDoc>(jobCollection)]
      .map((j) => j.doc)
      .filter((j) => j.ID.startsWith(prefix) && visible(j))
      .sort((a, b) => compare(a.Namespace, b.Namespace) || compare(a.ID, b.ID));
    return readResponse(applyListFilter(req.url, jobs.map(renderJobStub)), table.value);
  }

  async function read(req: RequestContext): Promise<Response> {
    const ns = queryNamespace(req);
    await requireCapability(req, ns, "read-job");
    const job = current(ns, req.params.id!);
    if (!job) throw jobNotFound();
    return readResponse(job, job.ModifyIndex);
  }

  const id = ":id([^/]+)";
  const routes = [
    { method: ["PUT", "POST"], path: "/v1/jobs", handler: register },
    { method: "GET", path: "/v1/jobs", handler: list },
    { method: "GET", path: `/v1/job/${id}`, handler: read },
    { method: "DELETE", path: `/v1/job/${id}`, handler: deregister },
  ];
  return { routes, close: unwatch };
}

/**
 * A job write's commit: `stored` (null deletes) under `docId`, the Job event for `job` and then, when one was
 * launched, the Evaluation's; its result is the evaluation's ID ("" when none).
 */
function jobCommit(
  type: "JobRegistered" | "JobDeregistered",
  docId: string,
  stored: JobDoc | null,
  job: JobDoc,
  evaluation: Record<string, unknown> | undefined,
): CommitPlan<string> {
  const events: EventInput[] = [jobEvent(type, job)];
  if (evaluation) events.push(evaluationEvent(type, evaluation));
  return {
    writes: [{ collection: jobCollection, id: docId, doc: stored }],
    events,
    result: (evaluation?.ID as string | undefined) ?? "",
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
