// /health probes the object store itself: with Swift's proxy stopped it says "object_store":"down" (status
// degraded) without any upload or download having failed, answers within ~2 s meanwhile, and "up" once Swift is
// back; a store that hangs is reported down too.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { startSwift, swiftSkipReason } from "../fixtures/swift.ts";
import { eventually } from "./helpers.ts";

if (swiftSkipReason) console.warn(`health probe test skipped: ${swiftSkipReason}`);

Deno.test({
  name: "/health reports the object store down while Swift is stopped, with no request failing, then up",
  ignore: swiftSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const swift = await startSwift();
    const dataDir = await Deno.makeTempDir({ prefix: "wharf-probe-" });
    let srv: ChildServer | undefined;
    try {
      srv = await spawnServer(dataDir, { ...swift.env("wharf-probe"), WHARF_NODE_NAME: "probe" });
      const url = srv.url;
      let slowest = 0;
      const health = async () => {
        const started = performance.now();
        const body = await (await fetch(`${url}/health`)).json();
        slowest = Math.max(slowest, performance.now() - started);
        return body;
      };
      // /health polled every 200 ms until `ok` says yes, for at most `ms`.
      const healthUntil = (what: string, ok: (h: Record<string, unknown>) => boolean, ms: number) =>
        eventually(
          what,
          async () => {
            const h = await health();
            return ok(h) ? h : undefined;
          },
          ms,
          200,
        );
      assertEquals((await health()).object_store, "up");
      assertEquals((await health()).status, "ok");

      await swift.haltProxy();
      const down = await healthUntil(
        "health says the object store is down",
        (h) => h.object_store === "down",
        10_000,
      );
      assertEquals(down.status, "degraded");
      assertEquals(down.node, "probe");

      await swift.startProxy();
      const upAgain = () =>
        healthUntil(
          "health says the object store is up again",
          (h) => h.object_store === "up" && h.status === "ok",
          20_000,
        );
      await upAgain();

      // A store that accepts connections and never answers: /health still answers within ~2 s, saying down.
      swift.freezeProxy(true);
      try {
        await healthUntil(
          "health says a hanging object store is down",
          (h) => h.object_store === "down",
          10_000,
        );
      } finally {
        swift.freezeProxy(false);
      }
      await upAgain();
      assert(slowest < 2500, `the slowest /health took ${slowest.toFixed(0)} ms`);
      console.log(`slowest /health while probing: ${slowest.toFixed(0)} ms`);
    } finally {
      if (srv) {
        srv.kill("SIGTERM");
        assertEquals((await srv.status).code, 0, srv.stderr());
      }
      await Deno.remove(dataDir, { recursive: true });
      await swift.stop();
    }
  },
});
