// A stalled reader (curl -N whose output nobody reads) while 100,000 events are published: the server's memory
// stays bounded, publishing is not held up, and once resumed the reader receives every event in order.

import { assert, assertEquals } from "../helpers/assert.ts";
import { publish, type PublishedEvent, rootSecret, spawnEventsServer } from "./stream_helpers.ts";

const totalEvents = 100_000;
const perBatch = 1000;
const padding = "x".repeat(900);

function rssBytes(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Reads curl's stdout line by line. */
class LineReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #decoder = new TextDecoder();
  #buffer = "";
  #scanned = 0;
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }
  async line(): Promise<string | undefined> {
    while (true) {
      // Only the text added since the last look can hold the next newline (lines here reach ~1 MB).
      const nl = this.#buffer.indexOf("\n", this.#scanned);
      if (nl >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        this.#scanned = 0;
        return line;
      }
      this.#scanned = this.#buffer.length;
      const chunk = await this.#reader.read();
      if (chunk.done) return undefined;
      this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
    }
  }
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

Deno.test("a stalled stream reader keeps server memory bounded and later receives every event in order", async () => {
  // A 64 MB V8 old-space cap: a server that kept the reader's ~100 MB backlog on its heap would die here.
  const { server, stop } = await spawnEventsServer("wharf-events-slow-", {
    WHARF_EVENTS_HEARTBEAT_MS: "50",
    DENO_V8_FLAGS: "--max-old-space-size=64",
  });
  const curl = new Deno.Command("curl", {
    args: [
      "-sS",
      "-N",
      "-H",
      `X-Nomad-Token: ${rootSecret}`,
      `${server.url}/v1/event/stream?topic=Node&index=-1`,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = new LineReader(curl.stdout);
  try {
    assertEquals(await lines.line(), "{}");
    const pid = server.process.pid;
    // Warm up the publish path so the baseline includes its steady-state memory.
    for (let i = 0; i < 3; i++) {
      await publish(server.url, [{
        Topic: "Job",
        Type: "JobRegistered",
        Key: "w",
        Payload: { Job: { Pad: padding } },
      }]);
    }
    const baseline = rssBytes(pid);
    let peak = baseline;
    let publishedBytes = 0;
    const started = performance.now();
    for (let b = 0; b < totalEvents / perBatch; b++) {
      const events: PublishedEvent[] = [];
      for (let i = 0; i < perBatch; i++) {
        const seq = b * perBatch + i;
        events.push({
          Topic: "Node",
          Type: "NodeEvent",
          Key: `k${seq}`,
          Payload: { Node: { Seq: seq, Pad: padding } },
        });
      }
      publishedBytes += JSON.stringify(events).length;
      await publish(server.url, events);
      peak = Math.max(peak, rssBytes(pid));
    }
    const publishSeconds = (performance.now() - started) / 1000;
    const growth = peak - baseline;
    console.log(
      `published ${totalEvents} events (${(publishedBytes / 1e6).toFixed(0)} MB) in ${
        publishSeconds.toFixed(1)
      } s ` +
        `with a stalled reader; server RSS ${(baseline / 1e6).toFixed(0)} MB -> peak ${
          (peak / 1e6).toFixed(0)
        } MB`,
    );
    // The backlog the reader owes is ~100 MB; neither the heap nor the HTTP layer may hold it. (Without any
    // reader the publish path alone grows RSS by ~60 MB under this heap cap.)
    assert(growth < publishedBytes * 0.9, `RSS grew by ${(growth / 1e6).toFixed(0)} MB`);

    let expected = 0;
    while (expected < totalEvents) {
      const line = await lines.line();
      assert(line !== undefined, `stream ended after ${expected} events`);
      const frame = JSON.parse(line) as { Events?: Array<{ Key: string }> };
      for (const e of frame.Events ?? []) {
        assertEquals(e.Key, `k${expected}`);
        expected++;
      }
    }
    assertEquals(expected, totalEvents);
  } finally {
    await lines.cancel();
    try {
      curl.kill("SIGTERM");
    } catch {
      // already gone
    }
    await curl.status;
    await stop();
  }
});
