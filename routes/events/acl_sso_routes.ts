// The route table of an SSO resource (auth methods, binding rules) as Nomad serves them, its read and delete
// handlers and the commit step of its upserts.

import type { Handler, RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { CommitPlan, EventInput, Json } from "../../lib/store/mod.ts";
import type { AclState } from "./acl_state.ts";
import type { SsoState } from "./acl_sso_state.ts";
import { ApiError } from "../../lib/errors.ts";
import { emptyOk, nomadJson, requireAclsEnabled } from "./acl_http.ts";

export interface ResourceHandlers {
  list: Handler;
  upsert: Handler;
  read: Handler;
  remove: Handler;
}

/** `GET <base>s`, `PUT|POST <base>` (create), `PUT|POST <base>/:key` (update), `GET` and `DELETE <base>/:key`. */
export function resourceRoutes(base: string, h: ResourceHandlers): Route[] {
  const one = `${base}/:key([^/]+)`;
  return [
    { method: "GET", path: `${base}s`, handler: h.list },
    { method: ["POST", "PUT"], path: base, handler: h.upsert },
    { method: ["POST", "PUT"], path: one, handler: h.upsert },
    { method: "GET", path: one, handler: h.read },
    { method: "DELETE", path: one, handler: h.remove },
  ];
}

/** The management-only delete of the document named by the `key` path parameter, with its event. */
export function removeHandler<T>(
  acl: AclState,
  sso: SsoState,
  collection: string,
  notFound: string,
  deleted: (doc: T) => EventInput,
): Handler {
  return async (req: RequestContext) => {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    return emptyOk(await sso.remove(collection, req.params.key!, notFound, deleted));
  };
}

/** The management-only read of the document named by the `key` path parameter (404 `notFound`). */
export function readHandler<T extends { ModifyIndex: number }>(
  acl: AclState,
  lookup: (key: string) => T | undefined,
  notFound: string,
  render: (doc: T) => Record<string, unknown>,
): Handler {
  return (req: RequestContext) => {
    requireAclsEnabled(acl);
    acl.requireManagement(req);
    const doc = lookup(req.params.key!);
    if (!doc) throw new ApiError(404, notFound);
    return nomadJson(render(doc), doc.ModifyIndex, true);
  };
}

/** What a commit that stores `doc` (an upsert) returns: its write, its event and the document. */
export function upsertStep<T extends object>(
  collection: string,
  id: string,
  doc: T,
  event: EventInput,
): CommitPlan<T> {
  return { writes: [{ collection, id, doc: { ...doc } as Json }], events: [event], result: doc };
}
