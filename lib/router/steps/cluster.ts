// Route step, on a cluster: a request sees what other nodes committed before it arrived (docs/scale-out.md).

import { asApiError } from "../../store_http.ts";
import type { Handler, RequestContext } from "../../http.ts";
import type { Context } from "../context.ts";
import type { RouteStep } from "../route.ts";

/**
 * A node's view of a cluster's commits. A write (any method but GET and HEAD) first catches up with every commit
 * acknowledged anywhere before it arrived, so it acts on what its client saw; a GET or HEAD is answered from the
 * view at once (reads cost no database round trip) and only a miss (401, 403, 404) catches up and, when the view
 * moved, is answered again: a client behind a load balancer finds what it just created on another node. A GET
 * may still show an older state of something that exists for the few milliseconds a commit takes to reach every
 * node (docs/scale-out.md).
 */
export interface ClusterView {
  /** Resolves once the view includes every commit acknowledged before the call; never rejects. */
  sync(): Promise<void>;
  /** The view's newest applied Index. */
  index(): number;
}

/** The step for a cluster's view; routes marked `localView` answer from the view as it is. */
export function catchUpWith(cluster: ClusterView): RouteStep {
  return (route, next) => {
    if (route.localView) return next;
    const catchUpFirst = route.catchUpFirst === true;
    return (ctx) => answerCaughtUp(cluster, catchUpFirst, next, ctx as Context);
  };
}

/** Answers that may come from a view behind another node's commit: a GET answered so is asked again. */
function isMiss(status: number): boolean {
  return status === 404 || status === 401 || status === 403;
}

function isMissError(error: unknown): boolean {
  const answer = asApiError(error);
  return answer !== undefined && isMiss(answer.status);
}

/**
 * Runs `handler` for a request: a write after catching up; a read at once, and once more on a fresh context
 * when it missed (answered or threw 401, 403, 404) and catching up moved the view.
 */
function answerCaughtUp(
  cluster: ClusterView,
  catchUpFirst: boolean,
  handler: Handler,
  ctx: Context,
): Response | Promise<Response> {
  const method = ctx.request.method;
  if ((method !== "GET" && method !== "HEAD") || catchUpFirst) {
    return cluster.sync().then(() => handler(ctx));
  }
  const seen = cluster.index();
  let answer: Response | Promise<Response>;
  try {
    answer = handler(ctx);
  } catch (error) {
    if (isMissError(error)) return answerAgain(cluster, seen, { error }, handler, ctx);
    throw error;
  }
  if (answer instanceof Promise) {
    return answer.then(
      (r) => isMiss(r.status) ? answerAgain(cluster, seen, { answer: r }, handler, ctx) : r,
      (error) =>
        isMissError(error) ? answerAgain(cluster, seen, { error }, handler, ctx) : Promise.reject(error),
    );
  }
  return isMiss(answer.status) ? answerAgain(cluster, seen, { answer }, handler, ctx) : answer;
}

/** A read that missed at view Index `seen`: the same miss when catching up did not move the view, else rerun. */
async function answerAgain(
  cluster: ClusterView,
  seen: number,
  missed: { answer: Response } | { error: unknown },
  handler: Handler,
  ctx: Context,
): Promise<Response> {
  await cluster.sync();
  if (cluster.index() === seen) {
    if ("error" in missed) throw missed.error;
    return missed.answer;
  }
  if ("answer" in missed) await missed.answer.body?.cancel();
  const again: RequestContext = ctx.again();
  return await handler(again);
}
