// Routes only tests use (WHARF_TEST_ROUTES=1): durable writes for the crash test, a slow request and an
// endless stream for the shutdown test, a header echo for the response guard. Never enabled by default.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import { json, readJson } from "../../lib/http.ts";

/** Path kind → collection: "packed" is checkpointed as packs (app.ts), so the crash test covers both. */
const collections: Record<string, string> = { items: "test/items", packed: "test/packed" };

export function createTestingApi(ctx: AppContext): ApiModule {
  const { store } = ctx.data;
  return {
    routes: [
      {
        method: "PUT",
        path: "/v1/_test/:kind(items|packed)/:id",
        handler: async (req) => {
          const collection = collections[req.params.kind!]!;
          const body = await readJson(req);
          if (typeof body !== "object" || body === null) {
            throw new ApiError(400, "body must be a JSON object");
          }
          const id = req.params.id!;
          const { index } = await store.transact([`${collection}/${id}`], () => ({
            writes: [{ collection, id, doc: body as Record<string, unknown> }],
            events: [{ Topic: "Test", Type: "TestWritten", Key: id, Payload: { Item: body } }],
          }));
          return json({ id, index });
        },
      },
      {
        method: "GET",
        path: "/v1/_test/:kind(items|packed)/:id",
        handler: (req) => {
          const stored = store.get(collections[req.params.kind!]!, req.params.id!);
          if (!stored) throw new ApiError(404, "item not found");
          return json(stored);
        },
      },
      {
        method: "GET",
        path: "/v1/_test/slow",
        handler: async (req) => {
          await new Promise((r) => setTimeout(r, Number(req.url.searchParams.get("ms") ?? 500)));
          return json({ done: true });
        },
      },
      {
        // A handler that puts what it was sent into a header, as a buggy one could: the router's last guard.
        method: "GET",
        path: "/v1/_test/echo-header",
        handler: (req) =>
          new Response("{}", { headers: { "X-Echo": req.url.searchParams.get("value") ?? "" } }),
      },
      {
        method: "GET",
        path: "/v1/_test/stream",
        handler: () => {
          const encoder = new TextEncoder();
          let timer: ReturnType<typeof setInterval> | undefined;
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              const end = () => {
                clearInterval(timer);
                try {
                  controller.close();
                } catch {
                  // already closed by a client disconnect
                }
              };
              controller.enqueue(encoder.encode("{}\n"));
              timer = setInterval(() => controller.enqueue(encoder.encode("{}\n")), 50);
              if (ctx.shutdownSignal.aborted) end();
              ctx.shutdownSignal.addEventListener("abort", end, { once: true });
            },
            cancel() {
              clearInterval(timer);
            },
          });
          return new Response(body, { headers: { "Content-Type": "application/json" } });
        },
      },
    ],
  };
}
