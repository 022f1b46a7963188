// Document store: puts/s and gets/s with 100,000 documents; start-up time and RSS of a fresh process
// opening them (from checkpoint files, and with the last 10,000 writes only in the log).

import { DataDir } from "../../lib/store/mod.ts";
import type { Figure } from "../lib.ts";

const total = Number(Deno.env.get("BENCH_DOCS") ?? 100_000);

function doc(i: number) {
  return {
    name: `box-${i}`,
    owner: `user-${i % 500}`,
    description: "a benchmark document ".repeat(4),
    downloads: i,
  };
}

async function openInChild(dir: string): Promise<{ ms: number; rssMiB: number; count: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../open_store.ts", import.meta.url).pathname, dir],
    stdout: "piped",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  const dir = await Deno.makeTempDir({ dir: Deno.env.get("BENCH_DIR") ?? ".", prefix: ".bench-store-" });
  try {
    const data = await DataDir.open(dir, { checkpointMs: 1000, log: { retainIndexes: 1_000_000 } });
    const store = data.store;
    let started = performance.now();
    const writers = 64;
    let next = 0;
    await Promise.all(Array.from({ length: writers }, async () => {
      while (next < total) {
        const i = next++;
        await store.put("test/items", `doc-${i}`, doc(i));
      }
    }));
    const putsPerSec = total / ((performance.now() - started) / 1000);
    // Baseline for reads: a plain Map lookup of the same keys.
    const plain = new Map<string, unknown>();
    for (let i = 0; i < total; i++) plain.set(`doc-${i}`, doc(i));
    const reads = 1_000_000;
    started = performance.now();
    let hits = 0;
    for (let i = 0; i < reads; i++) if (plain.get(`doc-${i % total}`)) hits++;
    const mapPerSec = reads / ((performance.now() - started) / 1000);
    started = performance.now();
    for (let i = 0; i < reads; i++) if (store.get("test/items", `doc-${i % total}`)) hits++;
    const getsPerSec = reads / ((performance.now() - started) / 1000);
    started = performance.now();
    await store.checkpoint();
    const checkpointMs = performance.now() - started;
    await data.close();

    const fromFiles = await openInChild(dir);
    // Leave the last 10,000 writes only in the log: start-up must replay them.
    const again = await DataDir.open(dir, { checkpointMs: 3_600_000, log: { retainIndexes: 1_000_000 } });
    for (let i = 0; i < 10_000; i++) await again.store.put("test/items", `doc-${i}`, doc(i + 1));
    await again.close({ checkpoint: false });
    const withReplay = await openInChild(dir);
    if (fromFiles.count !== total || withReplay.count !== total) {
      throw new Error("documents missing after reopen");
    }
    return {
      title: `Document store: ${total.toLocaleString("en-US")} documents`,
      figures: [
        {
          name: "puts/s (64 concurrent writers, each durable)",
          value: putsPerSec,
          unit: "puts/s",
          target: "–",
        },
        {
          name: "gets/s (memory)",
          value: getsPerSec,
          unit: "gets/s",
          baseline: { name: "plain Map.get", value: mapPerSec },
        },
        { name: "start-up from checkpoint files", value: fromFiles.ms, unit: "ms", target: "< 2,000 ms" },
        {
          name: "start-up replaying 10,000 log lines",
          value: withReplay.ms,
          unit: "ms",
          target: "< 2,000 ms",
        },
        {
          name: "RSS after start-up",
          value: Math.max(fromFiles.rssMiB, withReplay.rssMiB),
          unit: "MiB",
          target: "< 300 MB",
        },
        { name: "checkpoint of all documents", value: checkpointMs, unit: "ms" },
      ],
      notes: [`hits ${hits}`],
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
