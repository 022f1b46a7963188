// Shared pieces of the event benchmarks: a child server, publishing, percentiles, stream byte counting.

import { type ChildServer, spawnServer } from "../tests/helpers/server.ts";

export const benchSecret = "b3c2e9b4-5f6d-4e7a-8b9c-0d1e2f3a4b5c";

export async function benchServer(dir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  return await spawnServer(dir, { WHARF_ACL_BOOTSTRAP_SECRET: benchSecret, ...env });
}

export async function stopServer(server: ChildServer): Promise<void> {
  server.kill("SIGTERM");
  await server.status;
}

export async function publishEvents(url: string, events: unknown[]): Promise<number> {
  const res = await fetch(`${url}/v1/event/publish`, {
    method: "POST",
    headers: { "X-Nomad-Token": benchSecret },
    body: JSON.stringify({ Events: events }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`publish: ${res.status} ${text}`);
  return JSON.parse(text).Index;
}

export function nodeEvents(count: number, offset: number, padding = ""): unknown[] {
  const out = [];
  for (let i = 0; i < count; i++) {
    out.push({
      Topic: "Node",
      Type: "NodeEvent",
      Key: `n${offset + i}`,
      Payload: { Node: { Seq: offset + i, Pad: padding } },
    });
  }
  return out;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function openStream(
  url: string,
  query: string,
): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const res = await fetch(`${url}/v1/event/stream?${query}`, { headers: { "X-Nomad-Token": benchSecret } });
  if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
  return res.body!.getReader();
}

export function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  let i = bytes.indexOf(10);
  while (i >= 0) {
    n++;
    i = bytes.indexOf(10, i + 1);
  }
  return n;
}

export const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });

/** A stream read through `curl -sN` (a separate client process, as real consumers are): its stdout reader. */
export function curlStream(
  url: string,
  query: string,
): { reader: ReadableStreamDefaultReader<Uint8Array>; stop(): Promise<void> } {
  const child = new Deno.Command("curl", {
    args: ["-sN", "-H", `X-Nomad-Token: ${benchSecret}`, `${url}/v1/event/stream?${query}`],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  return {
    reader,
    async stop() {
      await reader.cancel().catch(() => {});
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
    },
  };
}
