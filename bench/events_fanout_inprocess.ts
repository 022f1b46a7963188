// Fan-out without HTTP: 100 StreamSubscribers on one hub read their bodies in this process while 100,000 events
// are committed in batches of 1000, isolating the stream's own cost from sockets and client processes.
// Baseline: the same commits with no subscriber. Run: deno run -A bench/events_fanout_inprocess.ts

import { DataDir } from "../lib/store/mod.ts";
import { StreamHub } from "../routes/events/stream_hub.ts";
import { StreamSubscriber } from "../routes/events/stream_subscriber.ts";
import { compileMatcher, filterKey } from "../routes/events/stream_filter.ts";
import { parseStreamQuery } from "../routes/events/stream_query.ts";
import { countNewlines, fmt, nodeEvents } from "./events_common.ts";

const subscribers = Number(Deno.args[0] ?? 100);
const batches = 100;
const perBatch = 1000;

const dir = await Deno.makeTempDir({ prefix: "wharf-bench-fanout-mem-" });
const data = await DataDir.open(dir, { log: { retainIndexes: 1e9 } });
const commitAll = async (offset: number) => {
  for (let b = 0; b < batches; b++) {
    const events = nodeEvents(perBatch, offset + b * perBatch) as never;
    await data.store.transact([], () => ({ events }));
  }
};
try {
  const b0 = performance.now();
  await commitAll(0);
  const baselineSeconds = (performance.now() - b0) / 1000;

  const hub = new StreamHub(data.log);
  const query = parseStreamQuery(new URLSearchParams("topic=Node"));
  const matcher = compileMatcher(query);
  const subs = Array.from({ length: subscribers }, () =>
    new StreamSubscriber({
      log: data.log,
      hub,
      startIndex: -1,
      matcher,
      everything: false,
      filterKey: filterKey(query),
      heartbeatMs: 60_000,
      queueBatches: 64,
      queueBytes: 4 << 20,
      expired: () => false,
      onError: (err) => console.error(err),
      onClose: () => {},
    }));
  const t0 = performance.now();
  const reading = subs.map(async (s) => {
    const reader = s.body.getReader();
    let lines = 0;
    while (lines < batches + 1) {
      const chunk = await reader.read();
      if (chunk.done) break;
      lines += countNewlines(chunk.value);
    }
    await reader.cancel();
  });
  await commitAll(batches * perBatch);
  const commitSeconds = (performance.now() - t0) / 1000;
  await Promise.all(reading);
  const seconds = (performance.now() - t0) / 1000;
  hub.close();
  const total = batches * perBatch;
  console.log(`commits with no subscriber: ${fmt(total / baselineSeconds)} events/s`);
  console.log(`commits with ${subscribers} subscribers: ${fmt(total / commitSeconds)} events/s`);
  console.log(
    `delivered per subscriber: ${fmt(total / seconds)} events/s (${
      fmt((total * subscribers) / seconds)
    } in total)`,
  );
} finally {
  await data.close();
  await Deno.remove(dir, { recursive: true });
}
