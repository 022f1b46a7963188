// GET /v1/event/stream (docs/events.md#streaming-with-curl): query, token and topic ACL checked before any
// byte, then an NDJSON body, re-validated whenever the subscriber's token or any policy changes
// (docs/events.md#acl-policies-for-stream-readers) and ended cleanly at shutdown.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { AclCaller } from "./acl_types.ts";
import { type AclState, permissionDenied } from "./acl_state.ts";
import { parseStreamQuery } from "./stream_query.ts";
import { mayStream } from "./stream_auth.ts";
import { compileMatcher, filterKey, matchesEverything } from "./stream_filter.ts";
import { StreamHub } from "./stream_hub.ts";
import { StreamSubscriber } from "./stream_subscriber.ts";
import { streamOwnerKey, StreamSlots } from "./stream_limits.ts";
import type { EventsSettings } from "./settings.ts";

export interface EventStreamApi {
  routes: Route[];
  hub: StreamHub;
  /** Open streams against WHARF_EVENTS_MAX_STREAMS and the per-token cap. */
  slots: StreamSlots;
  close(): void;
}

export function createEventStream(ctx: AppContext, acl: AclState, settings: EventsSettings): EventStreamApi {
  const hub = new StreamHub(ctx.data.log);
  const delivered = ctx.metrics.counterValue(
    "wharf_events_delivered_batches_total",
    "Event batches (one commit's events that a stream's filter let through) sent to event-stream subscribers.",
  );
  const open = new Set<StreamSubscriber>();
  const subscribers = ctx.metrics.gaugeValue("wharf_events_subscribers", "Event streams open on this node.");
  const lagging = ctx.metrics.gaugeValue(
    "wharf_events_lagging_subscribers",
    "Event streams reading the log from disk: started behind the head, or their queue overflowed (slow readers).",
  );
  ctx.metrics.onScrape(() => {
    let behind = 0;
    for (const s of open) if (s.lagging) behind++;
    subscribers.set(open.size);
    lagging.set(behind);
  });
  const slots = new StreamSlots(settings.maxStreams, settings.maxStreamsPerToken);
  const endAll = () => {
    for (const s of open) s.end();
  };
  ctx.shutdownSignal.addEventListener("abort", endAll, { once: true });

  function stream(req: RequestContext): Response {
    const query = parseStreamQuery(req.url.searchParams);
    let caller: AclCaller;
    try {
      caller = acl.resolveCaller(req);
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) throw permissionDenied();
      throw err;
    }
    if (!mayStream(caller.acl, query)) throw permissionDenied();
    if (ctx.shutdownSignal.aborted) throw new ApiError(503, "server is shutting down");
    // Checked after the ACL, so a caller without access learns nothing about the caps (403 first).
    const releaseSlot = slots.acquire(streamOwnerKey(caller.accessorId, acl.enabled, req.clientIp));

    let expiresAt = caller.expiresAt;
    const accessorId = caller.accessorId;
    let subscriber: StreamSubscriber;
    try {
      subscriber = new StreamSubscriber({
        log: ctx.data.log,
        hub,
        startIndex: query.index,
        matcher: compileMatcher(query),
        everything: matchesEverything(query),
        filterKey: filterKey(query),
        heartbeatMs: settings.heartbeatMs,
        queueBatches: settings.queueBatches,
        queueBytes: settings.queueBytes,
        expired: () => expiresAt !== undefined && expiresAt <= Date.now(),
        onError: (err) => {
          ctx.logger.error("event stream failed", { request_id: req.requestId, error: String(err) });
        },
        onClose: () => cleanup(),
        onFrame: () => delivered.value++,
      });
    } catch (err) {
      releaseSlot();
      throw err;
    }
    open.add(subscriber);
    // Changes are reported synchronously at commit, before the log hands the same batch to the hub,
    // so a revoked stream never sends a frame at or above the revoking Index.
    const stopWatching = acl.enabled
      ? acl.onChange((change) => {
        if (change.kind === "token" && change.accessorId !== accessorId) return;
        const current = acl.callerForAccessor(accessorId);
        if (!current || !mayStream(current.acl, query)) {
          subscriber.end();
          return;
        }
        expiresAt = current.expiresAt;
      })
      : () => {};
    function cleanup() {
      stopWatching();
      open.delete(subscriber);
      releaseSlot();
    }
    return new Response(subscriber.body, {
      status: 200,
      headers: {
        "Content-Type": "application/json",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
      },
    });
  }

  return {
    routes: [{ method: "GET", path: "/v1/event/stream", handler: stream }],
    hub,
    slots,
    close() {
      endAll();
      hub.close();
    },
  };
}
