// Unit tests of the event stream's parts: query parsing, matching, filter keys, Go durations, and a subscriber
// that falls behind (log replay, retention pins).

import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { DataDir, type DataDirOptions } from "../../lib/store/mod.ts";
import { StreamHub } from "../../routes/events/stream_hub.ts";
import { StreamSubscriber } from "../../routes/events/stream_subscriber.ts";
import { parseStreamQuery } from "../../routes/events/stream_query.ts";
import { compileMatcher, filterKey } from "../../routes/events/stream_filter.ts";
import { formatGoDuration, parseGoDuration } from "../../routes/events/duration.ts";
import type { StreamEvent } from "../../lib/store/mod.ts";

const ev = (over: Partial<StreamEvent>): StreamEvent => ({
  Topic: "Job",
  Type: "JobRegistered",
  Key: "web",
  Namespace: "default",
  FilterKeys: null,
  Index: 1,
  Payload: {},
  ...over,
});

/** A data dir in a temp folder with a stream hub on its log; `append` commits one Node event keyed `key`. */
async function openLogWithHub(prefix: string, options: DataDirOptions) {
  const dir = await Deno.makeTempDir({ prefix });
  const data = await DataDir.open(dir, options);
  const hub = new StreamHub(data.log);
  const append = (key: string) =>
    data.store.transact(
      [],
      () => ({ events: [{ Topic: "Node", Type: "NodeEvent", Key: key, Payload: { Node: {} } }] }),
    );
  const stop = async () => {
    hub.close();
    await data.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { data, hub, append, stop };
}

/** A subscriber from the log's start that keeps every event, with a 2-batch queue and no heartbeat to speak of. */
function everythingSubscriber(data: DataDir, hub: StreamHub, onClose: () => void): StreamSubscriber {
  return new StreamSubscriber({
    log: data.log,
    hub,
    startIndex: 0,
    matcher: () => true,
    everything: true,
    heartbeatMs: 60_000,
    queueBatches: 2,
    queueBytes: 1 << 20,
    expired: () => false,
    onError: (err) => {
      throw err;
    },
    onClose,
  });
}

Deno.test("stream query groups topics per name, keeps the first index and rejects three-part topics", () => {
  const q = parseStreamQuery(
    new URLSearchParams("index=5&index=x&topic=Job:web&topic=Job&topic=Node:&namespace="),
  );
  assertEquals(q.index, 5);
  assertEquals(q.namespace, "default");
  assertEquals([...q.topics.entries()].map(([k, v]) => [k, [...v]]), [["Job", ["web", "*"]], ["Node", [""]]]);
  assertEquals(parseStreamQuery(new URLSearchParams("index=-3")).index, -3);
  assertEquals(parseStreamQuery(new URLSearchParams("")).topics.get("*")?.has("*"), true);
  assertThrows(() => parseStreamQuery(new URLSearchParams("topic=a:b:c")));
  assertThrows(() => parseStreamQuery(new URLSearchParams("index=1.5")));
});

Deno.test("stream matcher applies the namespace rule, FilterKeys, the NodeDrain view and topic wildcards", () => {
  const m = compileMatcher(
    parseStreamQuery(new URLSearchParams("topic=Evaluation:web&topic=NodeDrain&namespace=prod")),
  );
  assert(!m(ev({ Topic: "Evaluation", Key: "e", FilterKeys: ["web", ""] })), "other namespace");
  assert(m(ev({ Topic: "Evaluation", Key: "e", Namespace: "prod", FilterKeys: ["web", ""] })));
  assert(m(ev({ Topic: "Node", Type: "NodeEligibility", Key: "n", Namespace: "" })));
  assert(!m(ev({ Topic: "Node", Type: "NodeRegistration", Key: "n", Namespace: "" })));
  const empty = compileMatcher(parseStreamQuery(new URLSearchParams("topic=Evaluation:")));
  assert(
    empty(ev({ Topic: "Evaluation", Key: "e", FilterKeys: ["web", ""] })),
    "empty key matches DeploymentID ''",
  );
  const star = compileMatcher(parseStreamQuery(new URLSearchParams("topic=*:web")));
  assert(star(ev({ Topic: "Job", Key: "web" })) && !star(ev({ Topic: "Job", Key: "api" })));
});

Deno.test("stream filter keys are equal exactly when two queries keep the same events", () => {
  const key = (q: string) => filterKey(parseStreamQuery(new URLSearchParams(q)));
  assertEquals(key("topic=Job:web&topic=Job&topic=Node"), key("topic=Node&topic=Job&topic=Job:web&index=4"));
  assert(key("topic=Job") !== key("topic=Job&namespace=prod"));
  assert(key("topic=Job:a") !== key("topic=Job:b"));
});

Deno.test("go durations parse and format like Go's time.Duration", () => {
  assertEquals(parseGoDuration("1h30m"), 5400e9);
  assertEquals(parseGoDuration("500ms"), 500e6);
  assertEquals(parseGoDuration("1.5h"), 5400e9);
  assertEquals(parseGoDuration("abc"), undefined);
  assertEquals(formatGoDuration(3600e9), "1h0m0s");
  assertEquals(formatGoDuration(90e9), "1m30s");
  assertEquals(formatGoDuration(1.5e9), "1.5s");
  assertEquals(formatGoDuration(500e6), "500ms");
});

Deno.test("a subscriber that overflows its queue reads the log from its cursor and rejoins live without gaps", () =>
  withStarted(() => openLogWithHub("wharf-sub-", { checkpointMs: 60_000 }), async ({ data, hub, append }) => {
    for (let i = 0; i < 5; i++) await append(`old${i}`);
    let closed = false;
    const sub = everythingSubscriber(data, hub, () => (closed = true));
    const reader = sub.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const keys: string[] = [];
    const indexes: number[] = [];
    const readUntil = async (count: number) => {
      while (keys.length < count) {
        const chunk = await reader.read();
        assert(!chunk.done);
        buffer += decoder.decode(chunk.value, { stream: true });
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const frame = JSON.parse(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
          for (const e of frame.Events ?? []) {
            keys.push(e.Key);
            indexes.push(frame.Index);
          }
        }
      }
    };
    // Nobody reads while 50 batches commit: the 2-batch queue overflows.
    for (let i = 0; i < 50; i++) await append(`live${i}`);
    await readUntil(55);
    for (let i = 0; i < 5; i++) await append(`late${i}`);
    await readUntil(60);
    const expected = [
      ...Array.from({ length: 5 }, (_, i) => `old${i}`),
      ...Array.from({ length: 50 }, (_, i) => `live${i}`),
      ...Array.from({ length: 5 }, (_, i) => `late${i}`),
    ];
    assertEquals(keys, expected);
    for (let i = 1; i < indexes.length; i++) assert(indexes[i]! > indexes[i - 1]!);
    await reader.cancel();
    assert(closed, "cancel frees the subscription");
    assertEquals(hub.subscriberCount, 0);
  }));

Deno.test("retention keeps the segments a lagging subscriber still has to read", () => {
  const options = { checkpointMs: 60_000, log: { segmentIndexes: 5, retainIndexes: 5, pinBytes: 1 << 30 } };
  return withStarted(() => openLogWithHub("wharf-pin-", options), async ({ data, hub, append }) => {
    await append("first");
    const sub = everythingSubscriber(data, hub, () => {});
    for (let i = 0; i < 40; i++) await append(`k${i}`);
    await data.store.checkpoint();
    await data.log.applyRetention(data.store.checkpointIndex);
    assertEquals(data.log.firstIndex, 1, "the stalled subscriber pins the oldest segment");
    const reader = sub.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/"Key"/g) ?? []).length < 41) {
      const chunk = await reader.read();
      assert(!chunk.done);
      text += decoder.decode(chunk.value, { stream: true });
    }
    const keys = [...text.matchAll(/"Key":"([^"]+)"/g)].map((m) => m[1]);
    assertEquals(keys, ["first", ...Array.from({ length: 40 }, (_, i) => `k${i}`)]);
    await reader.cancel();
    await data.log.applyRetention(data.store.checkpointIndex);
    assert(data.log.firstIndex > 1, "released once the subscriber is gone");
  });
});
