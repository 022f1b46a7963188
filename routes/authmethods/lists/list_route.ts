// Shared GET list handler body: one resource's documents and tombstones under one parent, paged and filtered.

import type { RequestContext } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { collections } from "../common.ts";
import { listResponse, parseFilterParam, runList } from "./listing.ts";
import { type AuthService, listEnvironment } from "../service.ts";
import type { ActorCaller, TombstoneDoc } from "../state.ts";

export interface ChildListSpec<T extends { created_time: string; updated_time: string }> {
  resource: string;
  collection: string;
  caller: ActorCaller;
  /** Whether a live document belongs to the queried parent. */
  belongs(doc: T): boolean;
  /** Whether a tombstone of this resource belongs to the queried parent. */
  tombstoneBelongs(tombstone: TombstoneDoc): boolean;
  render(stored: StoredDoc<T>): Record<string, unknown> | undefined;
  /** What identifies the query besides its filter (parent id, recursion…), so a list token is not reused elsewhere. */
  queryParts: unknown[];
}

export function respondWithChildList<T extends { created_time: string; updated_time: string }>(
  svc: AuthService,
  ctx: RequestContext,
  spec: ChildListSpec<T>,
): Response {
  return listResponse(runList<T>({
    resource: spec.resource,
    candidates: filterIter(svc.state.list<T>(spec.collection), (d) => spec.belongs(d.doc)),
    tombstones: filterIter(
      svc.state.list<TombstoneDoc>(collections.tombstones),
      (t) => t.doc.resource === spec.resource && spec.tombstoneBelongs(t.doc),
    ),
    render: spec.render,
    caller: spec.caller,
    queryKey: JSON.stringify([...spec.queryParts, ctx.url.searchParams.get("filter") ?? ""]),
    ...listEnvironment(svc, ctx.url),
  }, parseFilterParam(ctx.url)));
}

export function* filterIter<T>(it: Iterable<T>, keep: (x: T) => boolean): Generator<T> {
  for (const x of it) if (keep(x)) yield x;
}
