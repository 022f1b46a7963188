// Node endpoints (docs/events.md#jobs-and-nodes): register (wharf-only), drain, eligibility, purge, list and
// read. Every write commits the node and its Node event in one batch whose Index stamps ModifyIndex.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import type { AclCaller } from "./acl_types.ts";
import { applyListFilter } from "./list_filter.ts";
import { nodeCollection, type NodeDoc, renderNode, renderNodeStub } from "./nodes_model.ts";
import {
  decodeDrainRequest,
  decodeRegistration,
  drainNode,
  invalidEligibility,
  registerNode,
  setEligibility,
} from "./nodes_ops.ts";
import {
  member,
  permissionDenied,
  readObjectBody,
  readResponse,
  type ResolveCaller,
  TableIndex,
  writeResponse,
} from "./nodes_http.ts";

type NodeEventType = "NodeRegistration" | "NodeDrain" | "NodeEligibility" | "NodeDeregistration";

function nodeEvent(type: NodeEventType, node: NodeDoc): EventInput {
  return {
    Topic: "Node",
    Type: type,
    Key: node.ID,
    Namespace: "",
    FilterKeys: null,
    Payload: { Node: renderNode(node) },
  };
}

function nodeWriteAnswer(index: number): Response {
  return writeResponse({ EvalIDs: null, EvalCreateIndex: 0, NodeModifyIndex: index, Index: index }, index);
}

const nodeNotFound = () => new ApiError(404, "node not found");

/** The routes, and `close` to stop following the collection (the store outlives a module in tests). */
export function nodeRoutes(ctx: AppContext, resolveCaller: ResolveCaller): ApiModule {
  const store = ctx.data.store;
  const table = new TableIndex();
  for (const n of store.list(nodeCollection)) table.bump(n.index);
  const unwatch = store.watch(nodeCollection, (change) => table.bump(change.index));

  async function callerWith(req: RequestContext, allowed: (c: AclCaller) => boolean): Promise<AclCaller> {
    const caller = await resolveCaller(req);
    if (!allowed(caller)) throw permissionDenied();
    return caller;
  }
  const canWrite = (c: AclCaller) => c.acl.allowNodeWrite();
  const canRead = (c: AclCaller) => c.acl.allowNodeRead() || c.acl.allowNodeWrite();
  const lockOf = (id: string) => `${nodeCollection}/${id}`;
  const current = (id: string) => store.get<NodeDoc>(nodeCollection, id)?.doc;

  /**
   * The commit plan of a change to node `id`: 404 when it is absent, `check` may abort, and `next` builds the
   * new state at the commit's Index, stored with its `type` event.
   */
  function planNodeChange(
    id: string,
    type: NodeEventType,
    next: (existing: NodeDoc, index: number) => NodeDoc,
    check?: (existing: NodeDoc) => void,
  ) {
    return () => {
      const existing = current(id);
      if (!existing) throw nodeNotFound();
      check?.(existing);
      return (index: number) => {
        const node = next(existing, index);
        return {
          writes: [{ collection: nodeCollection, id, doc: node }],
          events: [nodeEvent(type, node)],
        };
      };
    };
  }

  async function register(req: RequestContext): Promise<Response> {
    await callerWith(req, canWrite);
    const decoded = decodeRegistration(await readObjectBody(req), Date.now());
    const { index } = await store.transact([lockOf(decoded.ID)], () => (index: number) => {
      const node = registerNode(decoded, current(decoded.ID), index);
      return {
        writes: [{ collection: nodeCollection, id: node.ID, doc: node }],
        events: [nodeEvent("NodeRegistration", node)],
      };
    });
    return nodeWriteAnswer(index);
  }

  async function drain(req: RequestContext): Promise<Response> {
    const caller = await callerWith(req, canWrite);
    const id = req.params.id!;
    const request = decodeDrainRequest(await readObjectBody(req));
    const { index } = await store.transact(
      [lockOf(id)],
      planNodeChange(
        id,
        "NodeDrain",
        (existing, index) => drainNode(existing, request, caller.accessorId, index, Date.now()),
      ),
    );
    return nodeWriteAnswer(index);
  }

  async function eligibility(req: RequestContext): Promise<Response> {
    await callerWith(req, canWrite);
    const id = req.params.id!;
    const wanted = member(await readObjectBody(req), "Eligibility");
    if (wanted !== "eligible" && wanted !== "ineligible") throw invalidEligibility(wanted);
    const plan = planNodeChange(
      id,
      "NodeEligibility",
      (existing, index) => setEligibility(existing, wanted, index, Date.now()),
      (existing) => {
        // Nothing changes, so nothing is committed and no event is written.
        if (existing.SchedulingEligibility === wanted) throw new UnchangedNode(existing.ModifyIndex);
      },
    );
    const { index } = await store.transact([lockOf(id)], plan).catch((err) => {
      if (err instanceof UnchangedNode) return { index: err.modifyIndex };
      throw err;
    });
    return nodeWriteAnswer(index);
  }

  async function purge(req: RequestContext): Promise<Response> {
    await callerWith(req, canWrite);
    const id = req.params.id!;
    const { index } = await store.transact([lockOf(id)], () => {
      const existing = current(id);
      if (!existing) throw nodeNotFound();
      return {
        writes: [{ collection: nodeCollection, id, doc: null }],
        events: [nodeEvent("NodeDeregistration", existing)],
      };
    });
    return nodeWriteAnswer(index);
  }

  async function list(req: RequestContext): Promise<Response> {
    await callerWith(req, canRead);
    const prefix = req.url.searchParams.get("prefix") ?? "";
    const nodes = [...store.list<NodeDoc>(nodeCollection)]
      .map((n) => n.doc)
      .filter((n) => n.ID.startsWith(prefix))
      .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
    return readResponse(applyListFilter(req.url, nodes.map(renderNodeStub)), table.value);
  }

  async function read(req: RequestContext): Promise<Response> {
    await callerWith(req, canRead);
    const node = current(req.params.id!);
    if (!node) throw nodeNotFound();
    return readResponse(renderNode(node), node.ModifyIndex);
  }

  const id = ":id([^/]+)";
  const routes = [
    { method: ["PUT", "POST"], path: "/v1/node/register", handler: register },
    { method: "GET", path: "/v1/nodes", handler: list },
    { method: ["PUT", "POST"], path: `/v1/node/${id}/drain`, handler: drain },
    { method: ["PUT", "POST"], path: `/v1/node/${id}/eligibility`, handler: eligibility },
    { method: ["PUT", "POST"], path: `/v1/node/${id}/purge`, handler: purge },
    { method: "GET", path: `/v1/node/${id}`, handler: read },
  ];
  return { routes, close: unwatch };
}

/** Aborts an eligibility transaction that would change nothing. */
class UnchangedNode extends Error {
  constructor(readonly modifyIndex: number) {
    super("node eligibility unchanged");
  }
}
