// Log-table retention across nodes: a stream reader on node B keeps its backlog while node A (the checkpoint
// writer) checkpoints and retains; a node killed with kill -9 stops holding rows once WHARF_NODE_TIMEOUT passed;
// a reader pinning more than WHARF_EVENTS_PIN_BYTES is cut off as on the data directory.

import postgres from "postgres";
import { assert, assertEquals } from "../helpers/assert.ts";
import type { ChildServer } from "../helpers/server.ts";
import { nodeEvent, publish, type StreamReader, subscribe } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

/** A Node event carrying `padBytes` of incompressible text (so PostgreSQL's stored size is about that). */
function paddedEvent(key: string, padBytes: number) {
  const random = crypto.getRandomValues(new Uint8Array(Math.ceil(padBytes * 3 / 4)));
  const pad = btoa(String.fromCharCode(...random)).slice(0, padBytes);
  return { ...nodeEvent(key), Payload: { Node: { ID: key, Pad: pad } } };
}

/** Publishes 300 events of 64 KiB on `node` (~19 MiB); returns the last Index. */
async function publishBig(node: ChildServer): Promise<number> {
  let last = 0;
  for (let i = 0; i < 300; i++) last = await publish(node.url, [paddedEvent(`big-${i}`, 64 * 1024)]);
  return last;
}

/** Reads data frames until `count` events arrived; returns their indexes. */
async function readEvents(stream: StreamReader, count: number): Promise<number[]> {
  const seen: number[] = [];
  while (seen.length < count) {
    const frame = await stream.nextData(15_000);
    if (!frame) throw new Error(`stream ended after ${seen.length} events`);
    for (const e of frame.Events ?? []) seen.push(e.Index);
  }
  return seen;
}

interface Cluster {
  db: postgres.Sql;
  a: ChildServer;
  b: ChildServer;
  /** The oldest row left in wharf_log. */
  firstRow(): Promise<number>;
  /** Node `name`'s published slowest reader (null: none). */
  slowestOf(name: string): Promise<number | null>;
}

/** A test on node a, started first and waited for until it is the checkpoint writer, and node b (with `env`). */
function retentionTest(name: string, env: Record<string, string>, fn: (c: Cluster) => Promise<void>): void {
  const retention = {
    WHARF_CHECKPOINT_INTERVAL: "250ms",
    WHARF_NODE_TIMEOUT: "3s",
    WHARF_EVENTS_RETAIN_INDEXES: "1",
  };
  clusterTest(name, { env: { ...retention, ...env }, stopSignal: "SIGKILL" }, async (cluster) => {
    const a = await cluster.spawn("a");
    await eventually(
      "node a writes checkpoints",
      async () => {
        const h = await (await fetch(`${a.url}/health`)).json();
        return h.checkpoint_writer === true ? h : undefined;
      },
      10_000,
      100,
    );
    const b = await cluster.spawn("b");
    const db = cluster.db;
    await fn({
      db,
      a,
      b,
      firstRow: async () => Number((await db`SELECT min(idx) AS m FROM wharf_log`)[0]!.m),
      slowestOf: async (name) => {
        const [row] = await db`SELECT slowest_reader FROM wharf_nodes WHERE name = ${name}`;
        return row?.slowest_reader === null || row === undefined ? null : Number(row.slowest_reader);
      },
    });
  });
}

/**
 * Opens a stream on b from the next index and reads the 3 events a publishes first; then a publishes ~19 MiB of
 * events (up to `last`), more than the sockets between b and this test buffer, so b's reader lags: returned once
 * b publishes it as its slowest reader (`held`).
 */
async function laggingReaderOnB(c: Cluster): Promise<
  { stream: StreamReader; read: number[]; last: number; held: number }
> {
  const from = (await (await fetch(`${c.a.url}/health`)).json()).index + 1;
  const stream = await subscribe(c.b.url, `index=${from}&topic=Node`);
  for (let i = 0; i < 3; i++) await publish(c.a.url, [nodeEvent(`warm-${i}`)]);
  const read = await readEvents(stream, 3);
  const last = await publishBig(c.a);
  const held = await eventually(
    "b publishes a lagging reader",
    async () => {
      const s = await c.slowestOf("b");
      return s !== null && s < last - 50 ? s : undefined;
    },
    10_000,
    100,
  );
  return { stream, read, last, held };
}

retentionTest(
  "retention on the writer keeps the backlog of a slow stream reader on another node",
  {},
  async (c) => {
    const { stream, read, last, held } = await laggingReaderOnB(c);
    // a checkpoints past `last` and retains: rows nobody reads go, b's reader's backlog stays.
    await eventually(
      "a checkpointed everything",
      async () => {
        const [m] = await c.db`SELECT value, written_by FROM wharf_meta WHERE key = 'checkpoint'`;
        return Number(m!.value) >= last && m!.written_by === "a" ? true : undefined;
      },
      10_000,
      100,
    );
    await eventually(
      "a deleted the rows no reader needs",
      async () => {
        const first = await c.firstRow();
        return first > read[0]! ? first : undefined;
      },
      10_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 1000)); // a few more retention runs
    assert(await c.firstRow() <= held, `rows from ${held} kept (first row ${await c.firstRow()})`);
    // The reader gets every event after the ones it read, none skipped.
    const rest = await readEvents(stream, last - read.at(-1)!);
    await stream.close();
    const expected = Array.from({ length: last - read.at(-1)! }, (_, i) => read.at(-1)! + 1 + i);
    assertEquals(rest, expected);
  },
);

retentionTest(
  "a node killed with kill -9 stops holding log rows once WHARF_NODE_TIMEOUT has passed",
  {},
  async (c) => {
    const { stream, read, held } = await laggingReaderOnB(c);
    assert(held > read[0]!);
    c.b.kill("SIGKILL");
    await stream.close();
    await c.b.status;
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 500));
    assert(await c.firstRow() <= held, "a dead node's reader holds rows until the timeout");
    const freed = await eventually(
      "rows beyond the dead reader are deleted",
      async () => {
        const first = await c.firstRow();
        return first > held ? Date.now() - killedAt : undefined;
      },
      15_000,
      100,
    );
    console.log(`rows freed ${freed} ms after kill -9 (WHARF_NODE_TIMEOUT=3s)`);
    assert(freed >= 1500, `freed after ${freed} ms: too early for a 3 s timeout`);
  },
);

retentionTest(
  "a reader pinning more than WHARF_EVENTS_PIN_BYTES is cut off and goes on from the oldest row left",
  { WHARF_EVENTS_PIN_BYTES: String(512 * 1024) },
  async (c) => {
    const { stream, read, last, held } = await laggingReaderOnB(c);
    // At most 512 KiB of rows (about 8 of these) stay for the reader.
    const first = await eventually(
      "the pinned rows beyond 512 KiB are deleted",
      async () => {
        const f = await c.firstRow();
        return f > held && last - f < 20 ? f : undefined;
      },
      10_000,
      100,
    );
    const rest = await readEvents(stream, 1);
    // Whatever the sockets held is delivered first; then the stream jumps to the oldest row left.
    let got = rest;
    while (got.at(-1)! < first) got = [...got, ...await readEvents(stream, 1)];
    const all = [...read, ...got];
    const gap = all.findIndex((v, i) => i > 0 && v !== all[i - 1]! + 1);
    assert(gap > 0, `the reader skipped the deleted rows: ${all.join(",")}`);
    assert(all[gap]! >= first - 1 && all[gap]! <= first + 5, `resumed near the oldest row ${first}`);
    await stream.close();
  },
);
