// What the multi-node scale tests share: a fixed root key, nodes started as real processes on one database (and
// stopped again), waiting for another node to catch up, and reading a stream's indexes.

import { type ChildServer, spawnServer } from "../helpers/server.ts";
import type { StreamReader } from "../events/stream_helpers.ts";

/** A base64 root key of 32 bytes of `fill`: every node of one test takes the same key. */
export function testRootKey(fill: number): string {
  return btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
}

/** Polls `fn` every `pollMs` until it returns a value; throws naming `what` after `ms`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  ms = 5000,
  pollMs = 20,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (true) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** wharf processes, each in its own temp data dir; `stop` ends the started ones and removes every dir. */
export class Nodes {
  readonly started: ChildServer[] = [];
  readonly #dirs: string[] = [];

  /** Starts one node named `name` (WHARF_NODE_NAME) with `env`. */
  async spawn(name: string, env: Record<string, string>): Promise<ChildServer> {
    const dir = await Deno.makeTempDir({ prefix: `wharf-node-${name}-` });
    this.#dirs.push(dir);
    const node = await spawnServer(dir, { ...env, WHARF_NODE_NAME: name });
    this.started.push(node);
    return node;
  }

  async stop(signal: Deno.Signal): Promise<void> {
    for (const n of this.started) {
      n.kill(signal);
      await n.status;
    }
    for (const d of this.#dirs) await Deno.remove(d, { recursive: true });
  }
}

/** Reads `stream` until the event with index `last`, returning every event index seen in order. */
export async function indexesUntil(stream: StreamReader, last: number): Promise<number[]> {
  const seen: number[] = [];
  while (seen.at(-1) !== last) {
    const frame = await stream.nextData(10_000);
    if (!frame) throw new Error("stream ended");
    for (const e of frame.Events ?? []) seen.push(e.Index);
  }
  await stream.close();
  return seen;
}
