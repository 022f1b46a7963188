// Fan-out: 100 subscribers (`curl -sN` processes) on one child server. Phase 1 publishes 100,000 events in batches of 1000 from 8
// concurrent publishers (baseline: the same with no subscriber) and measures
// the events/s each subscriber receives; phase 2 publishes single events at a modest rate and measures
// publish-to-delivery latency (p50/p99) across all subscribers.
// Run: deno run -A bench/events_fanout.ts [subscribers] [events]

import {
  benchServer,
  countNewlines,
  curlStream,
  fmt,
  nodeEvents,
  percentile,
  publishEvents,
  stopServer,
} from "./events_common.ts";

const subscribers = Number(Deno.args[0] ?? 100);
const totalEvents = Number(Deno.args[1] ?? 100_000);
const perBatch = 1000;
const publishers = 8;
const latencySamples = 200;

const dir = await Deno.makeTempDir({ prefix: "wharf-bench-fanout-" });
const server = await benchServer(dir, { WHARF_EVENTS_HEARTBEAT_MS: "60000" });
try {
  // Baseline: the same publishing with nobody subscribed.
  const batches = totalEvents / perBatch;
  const p0 = performance.now();
  await publishAll(server.url, 0);
  const baselineMs = performance.now() - p0;
  const start = await publishEvents(server.url, nodeEvents(1, -1));
  // Phase 1: throughput. Each subscriber counts frames (one per batch: every event matches topic=Node).
  const clients = Array.from(
    { length: subscribers },
    () => curlStream(server.url, `topic=Node&index=${start + 1}`),
  );
  const subs: Sub[] = clients.map((c) => ({ reader: c.reader, pending: undefined }));
  const finished: number[] = [];
  const t0 = performance.now();
  // One reference subscriber counts frames (one per batch: every event matches topic=Node); the others, to keep
  // the bench's own CPU out of the way, count bytes until they hold as many as the reference did.
  let expectedBytes: number | undefined;
  let announceExpected!: () => void;
  const expectedKnown = new Promise<void>((r) => (announceExpected = r));
  const consuming = subs.map(async (sub, i) => {
    let bytes = 0;
    let lastArrival = 0;
    if (i === 0) {
      let lines = 0;
      // The first line is the {} heartbeat.
      while (lines < batches + 1) {
        const chunk = await readChunk(sub);
        bytes += chunk.length;
        lines += countNewlines(chunk);
      }
      expectedBytes = bytes;
      announceExpected();
      finished.push(performance.now() - t0);
      return;
    }
    while (expectedBytes === undefined || bytes < expectedBytes) {
      if (expectedBytes === undefined) {
        sub.pending ??= sub.reader.read();
        const arrived = await Promise.race([sub.pending.then(() => true), expectedKnown.then(() => false)]);
        if (!arrived) continue;
      }
      const chunk = await readChunk(sub);
      bytes += chunk.length;
      lastArrival = performance.now() - t0;
    }
    finished.push(lastArrival);
  });
  await publishAll(server.url, totalEvents);
  const publishMs = performance.now() - t0;
  await Promise.all(consuming);
  finished.sort((a, b) => a - b);
  const slowest = finished[finished.length - 1]!;
  const perSubscriber = totalEvents / (slowest / 1000);

  // Phase 2: latency, one event per publish, stamped with the send time.
  const latencies: number[] = [];
  const parsing = subs.map(async (sub) => {
    const decoder = new TextDecoder();
    let buffer = "";
    let seen = 0;
    while (seen < latencySamples) {
      buffer += decoder.decode(await readChunk(sub), { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const frame = JSON.parse(line);
        for (const e of frame.Events ?? []) {
          latencies.push(performance.now() - e.Payload.Node.SentAt);
          seen++;
        }
      }
    }
  });
  for (let i = 0; i < latencySamples; i++) {
    const sentAt = performance.now();
    await publishEvents(server.url, [{
      Topic: "Node",
      Type: "NodeEvent",
      Key: `lat${i}`,
      Payload: { Node: { SentAt: sentAt } },
    }]);
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(parsing);
  latencies.sort((a, b) => a - b);
  await Promise.all(clients.map((c) => c.stop()));

  console.log(`${subscribers} subscribers, ${fmt(totalEvents)} events in batches of ${perBatch}`);
  console.log(`publishing with no subscriber: ${fmt(totalEvents / (baselineMs / 1000))} events/s`);
  console.log(`publishing took ${fmt(publishMs)} ms (${fmt(totalEvents / (publishMs / 1000))} events/s)`);
  console.log(
    `delivered per subscriber (slowest): ${fmt(perSubscriber)} events/s; all subscribers: ${
      fmt(perSubscriber * subscribers)
    } events/s`,
  );
  console.log(
    `publish-to-delivery latency over ${fmt(latencies.length)} deliveries: p50 ${
      fmt(percentile(latencies, 50), 1)
    } ms, p99 ${fmt(percentile(latencies, 99), 1)} ms`,
  );
} finally {
  await stopServer(server);
  await Deno.remove(dir, { recursive: true });
}

/** Publishes totalEvents in batches of perBatch from `publishers` concurrent loops, keys offset by `offset`. */
async function publishAll(url: string, offset: number): Promise<void> {
  const batches = totalEvents / perBatch;
  let next = 0;
  await Promise.all(Array.from({ length: publishers }, async () => {
    while (next < batches) {
      const b = next++;
      await publishEvents(url, nodeEvents(perBatch, offset + b * perBatch));
    }
  }));
}

interface Sub {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  /** A read started while waiting for something else; consumed by the next readChunk. */
  pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
}

async function readChunk(sub: Sub): Promise<Uint8Array> {
  const next = sub.pending ?? sub.reader.read();
  sub.pending = undefined;
  const result = await next;
  if (result.done) throw new Error("stream ended");
  return result.value;
}
