// The event stream across restarts (docs/events.md): the same frames from index 0, the oldest retained batch after
// retention, an acknowledged publish surviving kill -9, and SIGTERM ending open streams cleanly.

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer, withTimeout } from "../helpers/server.ts";
import { nodeEvent, publish, rootSecret, startEventsServer, subscribe } from "./stream_helpers.ts";

Deno.test("event stream index=0 yields the same frames after a restart", async () => {
  let srv = await startEventsServer();
  try {
    for (let i = 0; i < 5; i++) await publish(srv.url, [nodeEvent(`n${i}`)]);
    const before = await subscribe(srv.url, "index=0&topic=Node");
    const framesBefore = await before.dataUntilQuiet(300);
    await before.close();
    srv = await srv.restart();
    const after = await subscribe(srv.url, "index=0&topic=Node");
    const framesAfter = await after.dataUntilQuiet(300);
    await after.close();
    assertEquals(framesAfter.length, 5);
    assertEquals(framesAfter, framesBefore);
  } finally {
    await srv.stop();
  }
});

Deno.test("event stream index=1 starts at the oldest retained batch when retention removed segments", async () => {
  const srv = await startEventsServer({
    WHARF_EVENTS_SEGMENT_INDEXES: "10",
    WHARF_EVENTS_RETAIN_INDEXES: "20",
    WHARF_CHECKPOINT_INTERVAL: "50ms",
  });
  try {
    for (let i = 0; i < 60; i++) await publish(srv.url, [nodeEvent(`n${i}`)]);
    const log = srv.server.data.log;
    // Retention runs after checkpoints (every 50 ms) and may remove a further segment a moment after the first:
    // wait until it has removed some and the oldest index has held still for 300 ms, then subscribe.
    const deadline = Date.now() + 10_000;
    let oldest = log.firstIndex;
    let stillSince = Date.now();
    while (Date.now() < deadline && (oldest <= 1 || Date.now() - stillSince < 300)) {
      await new Promise((r) => setTimeout(r, 50));
      if (log.firstIndex !== oldest) [oldest, stillSince] = [log.firstIndex, Date.now()];
    }
    assert(oldest > 1, "retention removed old segments");
    const s = await subscribe(srv.url, "index=1");
    const frames = await s.dataUntilQuiet(300);
    await s.close();
    assertEquals(frames[0]!.Index, oldest);
    assertEquals(frames[frames.length - 1]!.Index, log.lastIndex);
    const indexes = frames.map((f) => f.Index!);
    assertEquals(indexes, [...indexes].sort((a, b) => a - b));
  } finally {
    await srv.stop();
  }
});

Deno.test("an acknowledged publish survives kill -9 and is streamed after restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-events-crash-" });
  const env = { WHARF_ACL_BOOTSTRAP_SECRET: rootSecret, WHARF_EVENTS_HEARTBEAT_MS: "50" };
  try {
    const first = await spawnServer(dir, env);
    const acked = await publish(first.url, [nodeEvent("survivor")]);
    first.kill("SIGKILL");
    await first.status;
    const second = await spawnServer(dir, env);
    try {
      const s = await subscribe(second.url, `index=${acked}`);
      const f = await s.nextData();
      assertEquals(f?.Index, acked);
      assertEquals(f?.Events?.[0]?.Key, "survivor");
      await s.close();
    } finally {
      second.kill("SIGTERM");
      await second.status;
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("SIGTERM with open streams ends every body cleanly and the server exits 0", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-events-term-" });
  try {
    const child = await spawnServer(dir, {
      WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
      WHARF_EVENTS_HEARTBEAT_MS: "50",
    });
    const streams = await Promise.all([
      subscribe(child.url, ""),
      subscribe(child.url, "topic=Node&index=-1"),
    ]);
    await publish(child.url, [nodeEvent("n1")]);
    child.kill("SIGTERM");
    for (const s of streams) {
      await withTimeout(s.readToEnd(15_000), 15_000, "stream did not end");
      assert(s.done);
    }
    const status = await child.status;
    assertEquals(status.code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
