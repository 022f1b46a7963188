// Durable publish rate: 64 concurrent publishers on POST /v1/event/publish (one event each) against a child
// server, vs the raw baseline of 64 concurrent EventLog.append calls in this process (same fsync group commit).
// Run: deno run -A bench/events_publish.ts [seconds]

import { EventLog } from "../lib/store/file/eventlog.ts";
import { benchSecret, benchServer, fmt, nodeEvents, publishEvents, stopServer } from "./events_common.ts";

const seconds = Number(Deno.args[0] ?? 5);
const concurrency = 64;

async function runFor(work: () => Promise<void>): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      await work();
      done++;
    }
  }));
  return done / seconds;
}

const rawDir = await Deno.makeTempDir({ prefix: "wharf-bench-raw-" });
const log = await EventLog.open(rawDir);
const event = nodeEvents(1, 0)[0] as {
  Topic: string;
  Type: string;
  Key: string;
  Payload: Record<string, unknown>;
};
const rawRate = await runFor(async () => {
  await log.append((index) => ({ Events: [{ ...event, Namespace: "", FilterKeys: null, Index: index }] }));
});
await log.close();
await Deno.remove(rawDir, { recursive: true });

const dir = await Deno.makeTempDir({ prefix: "wharf-bench-publish-" });
const server = await benchServer(dir);
let seq = 0;
const publishRate = await runFor(async () => {
  await publishEvents(server.url, nodeEvents(1, seq++));
});
// The same load from wrk (a native client in its own process), so the client's cost is not the limit.
const script = `${dir}/publish.lua`;
await Deno.writeTextFile(
  script,
  `wrk.method = "POST"\nwrk.body = '${JSON.stringify({ Events: nodeEvents(1, 0) })}'\n` +
    `wrk.headers["X-Nomad-Token"] = "${benchSecret}"\n`,
);
const wrk = await new Deno.Command("wrk", {
  args: ["-t2", `-c${concurrency}`, `-d${seconds}s`, "-s", script, `${server.url}/v1/event/publish`],
  stdout: "piped",
  stderr: "null",
}).output().catch(() => undefined);
const wrkText = wrk ? new TextDecoder().decode(wrk.stdout) : "";
const wrkRate = Number(/Requests\/sec:\s+([\d.]+)/.exec(wrkText)?.[1] ?? NaN);
const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(wrkText)?.[1];
await stopServer(server);
await Deno.remove(dir, { recursive: true });

console.log(`raw EventLog.append, ${concurrency} concurrent: ${fmt(rawRate)} batches/s`);
console.log(`POST /v1/event/publish, ${concurrency} concurrent: ${fmt(publishRate)} events/s (durable)`);
console.log(`ratio publish / raw append: ${(publishRate / rawRate).toFixed(2)}`);
console.log(
  `wrk -c${concurrency} POST /v1/event/publish: ${fmt(wrkRate)} events/s (durable${
    non2xx ? `, ${non2xx} non-2xx` : ""
  }); ` +
    `ratio ${(wrkRate / rawRate).toFixed(2)}`,
);
