// Event log: durable appends/s with group commit under 64 concurrent appenders, against a raw
// "write one line + fdatasync" loop on the same disk in the same run.

import { EventLog } from "../../lib/store/file/eventlog.ts";
import type { Figure } from "../lib.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 3);
const encoder = new TextEncoder();

function sampleEvent(i: number) {
  return {
    Topic: "Node",
    Type: "NodeRegistration",
    Key: `node-${i}`,
    Namespace: "",
    FilterKeys: null,
    Index: 0,
    Payload: { Node: { ID: `node-${i}`, Datacenter: "dc1", Status: "ready" } },
  };
}

async function rawBaseline(dir: string): Promise<number> {
  const file = await Deno.open(`${dir}/raw.ndjson`, { write: true, create: true, append: true });
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  const started = performance.now();
  while (performance.now() < deadline) {
    const line = encoder.encode(JSON.stringify({ Index: n + 1, Events: [sampleEvent(n)] }) + "\n");
    await file.write(line);
    await file.syncData();
    n++;
  }
  const elapsed = (performance.now() - started) / 1000;
  file.close();
  return n / elapsed;
}

async function groupCommit(dir: string, appenders: number): Promise<number> {
  const log = await EventLog.open(`${dir}/events`);
  const deadline = performance.now() + seconds * 1000;
  let acknowledged = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: appenders }, async (_, a) => {
    let i = 0;
    while (performance.now() < deadline) {
      await log.append((index) => ({ Events: [{ ...sampleEvent(a * 1e6 + i++), Index: index }] }));
      acknowledged++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  await log.close();
  return acknowledged / elapsed;
}

export default async function run(): Promise<{ title: string; figures: Figure[] }> {
  const dir = await Deno.makeTempDir({ dir: Deno.env.get("BENCH_DIR") ?? ".", prefix: ".bench-log-" });
  try {
    const raw = await rawBaseline(dir);
    const grouped = await groupCommit(dir, 64);
    return {
      title: "Event log: durable appends",
      figures: [{
        name: "acknowledged events/s, 64 concurrent appenders (group commit)",
        value: grouped,
        unit: "events/s",
        baseline: { name: "raw write + fdatasync per batch", value: raw },
        target: "≥ 20,000 events/s",
      }],
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
