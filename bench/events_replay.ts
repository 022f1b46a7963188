// Backlog replay: 1,000,000 events (10,000 batches of 100) in a log; a child server streams them from index=0
// (namespace=*, all topics) to a `curl -sN` client and we measure body MB/s. Baseline: reading the same segment files and parsing
// every line with JSON.parse in a plain loop, in this process.
// Run: deno run -A bench/events_replay.ts [events]

import { DataDir } from "../lib/store/mod.ts";
import { benchServer, curlStream, fmt, nodeEvents, publishEvents, stopServer } from "./events_common.ts";

const totalEvents = Number(Deno.args[0] ?? 1_000_000);
const perBatch = 100;

const dir = await Deno.makeTempDir({ prefix: "wharf-bench-replay-" });
try {
  const data = await DataDir.open(dir, { log: { retainIndexes: 10_000_000 } });
  let pending: Promise<unknown>[] = [];
  for (let b = 0; b < totalEvents / perBatch; b++) {
    const events = nodeEvents(perBatch, b * perBatch, "x".repeat(60)) as Array<Record<string, unknown>>;
    pending.push(data.log.append((index) => ({
      Events: events.map((e) => ({ ...e, Namespace: "", FilterKeys: null, Index: index })) as never,
    })));
    if (pending.length >= 256) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await data.close();

  // Baseline: read + parse the segment files.
  const files = [...Deno.readDirSync(`${dir}/events`)].filter((e) => e.name.endsWith(".ndjson")).map((e) =>
    e.name
  ).sort();
  const decoder = new TextDecoder();
  let baselineBytes = 0;
  let parsed = 0;
  const b0 = performance.now();
  for (const name of files) {
    const bytes = await Deno.readFile(`${dir}/events/${name}`);
    baselineBytes += bytes.length;
    let start = 0;
    for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
      const record = JSON.parse(decoder.decode(bytes.subarray(start, nl)));
      parsed += record.Events.length;
      start = nl + 1;
    }
  }
  const baselineSeconds = (performance.now() - b0) / 1000;

  const server = await benchServer(dir, {
    WHARF_EVENTS_HEARTBEAT_MS: "60000",
    WHARF_EVENTS_RETAIN_INDEXES: "10000000",
  });
  let streamBytes = 0;
  let streamSeconds = 0;
  try {
    await publishEvents(server.url, [{
      Topic: "Node",
      Type: "NodeEvent",
      Key: "replay-sentinel",
      Payload: { Node: {} },
    }]);
    const { reader, stop } = curlStream(server.url, "index=0&namespace=*");
    const s0 = performance.now();
    // The sentinel published after start-up is the newest batch, so its frame is the stream's last line.
    let tail = new Uint8Array(0);
    while (true) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error("stream ended");
      streamBytes += chunk.value.length;
      if (chunk.value[chunk.value.length - 1] !== 10) {
        tail = chunk.value.slice(Math.max(0, chunk.value.length - 512));
        continue;
      }
      const end = new Uint8Array(tail.length + Math.min(512, chunk.value.length));
      end.set(tail);
      end.set(chunk.value.subarray(Math.max(0, chunk.value.length - 512)), tail.length);
      if (new TextDecoder().decode(end).includes('"Key":"replay-sentinel"')) break;
      tail = new Uint8Array(0);
    }
    streamSeconds = (performance.now() - s0) / 1000;
    await stop();
  } finally {
    await stopServer(server);
  }
  const baselineMBs = baselineBytes / 1e6 / baselineSeconds;
  const streamMBs = streamBytes / 1e6 / streamSeconds;
  console.log(`${fmt(parsed)} events in ${files.length} segments, ${fmt(baselineBytes / 1e6)} MB on disk`);
  console.log(`baseline read+JSON.parse loop: ${fmt(baselineMBs)} MB/s (${fmt(baselineSeconds, 2)} s)`);
  console.log(
    `stream replay index=0: ${fmt(streamMBs)} MB/s (${fmt(streamBytes / 1e6)} MB in ${
      fmt(streamSeconds, 2)
    } s)`,
  );
  console.log(`ratio stream / baseline: ${(streamMBs / baselineMBs).toFixed(2)}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
