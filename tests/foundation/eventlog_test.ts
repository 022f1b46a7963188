// The file event log (lib/store/file/eventlog.ts) on a temp dir: indexes, shared fsync, torn tails cut at start,
// retention of whole checkpointed segments, subscribers, and lines longer than a read chunk.

import { assert, assertEquals } from "../helpers/assert.ts";
import { withTempDir } from "../helpers/files.ts";
import { EventLog } from "../../lib/store/file/eventlog.ts";

async function collect(log: EventLog, from: number): Promise<number[]> {
  const out: number[] = [];
  for await (const { index, line } of log.read(from)) {
    assertEquals(JSON.parse(line).Index, index);
    out.push(index);
  }
  return out;
}

function body(tag: string) {
  return () => ({ Events: [], tag });
}

Deno.test("event log assigns consecutive indexes and reads from an index inclusively", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir);
    for (let i = 0; i < 10; i++) await log.append(body(`b${i}`));
    assertEquals(log.lastIndex, 10);
    assertEquals(await collect(log, 4), [4, 5, 6, 7, 8, 9, 10]);
    assertEquals(await collect(log, 0), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assertEquals(await collect(log, 11), []);
    await log.close();
  }));

Deno.test("event log shares one fsync among concurrent appends and keeps their order", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir);
    const applied: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => log.append(body(`c${i}`), (b) => applied.push(b.index))),
    );
    assertEquals(
      results.map((r) => r.index).sort((a, b) => a - b),
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    assertEquals(applied, Array.from({ length: 200 }, (_, i) => i + 1));
    await log.close();
  }));

Deno.test("event log index keeps increasing across restarts and segment rolls", () =>
  withTempDir(async (dir) => {
    let log = await EventLog.open(dir, { segmentIndexes: 3 });
    for (let i = 0; i < 7; i++) await log.append(body("x"));
    await log.close();
    log = await EventLog.open(dir, { segmentIndexes: 3 });
    assertEquals(log.lastIndex, 7);
    const next = await log.append(body("y"));
    assertEquals(next.index, 8);
    assert(log.segmentCount >= 3, `expected several segments, got ${log.segmentCount}`);
    assertEquals(await collect(log, 2), [2, 3, 4, 5, 6, 7, 8]);
    await log.close();
  }));

Deno.test("event log cuts a torn last line at start and keeps every complete one", () =>
  withTempDir(async (dir) => {
    let log = await EventLog.open(dir);
    for (let i = 0; i < 5; i++) await log.append(body("ok"));
    await log.close();
    const [segment] = [...Deno.readDirSync(dir)].map((e) => `${dir}/${e.name}`);
    const before = Deno.statSync(segment!).size;
    Deno.writeTextFileSync(segment!, '{"Index":6,"Events":[{"Topic":"Te', { append: true });
    log = await EventLog.open(dir);
    assertEquals(log.lastIndex, 5);
    assertEquals(Deno.statSync(segment!).size, before);
    assertEquals((await log.append(body("after"))).index, 6);
    assertEquals(await collect(log, 1), [1, 2, 3, 4, 5, 6]);
    await log.close();
  }));

Deno.test("event log cuts a complete but unparsable tail line", () =>
  withTempDir(async (dir) => {
    let log = await EventLog.open(dir);
    await log.append(body("ok"));
    await log.close();
    const [segment] = [...Deno.readDirSync(dir)].map((e) => `${dir}/${e.name}`);
    Deno.writeTextFileSync(segment!, '{"Index":2,"Ev\u0000\u0000\n', { append: true });
    log = await EventLog.open(dir);
    assertEquals(log.lastIndex, 1);
    await log.close();
  }));

Deno.test("retention deletes only whole old segments that are checkpointed", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir, { segmentIndexes: 10, retainIndexes: 15 });
    for (let i = 0; i < 45; i++) await log.append(body("r"));
    // Segments: 1-10, 11-20, 21-30, 31-40, 41-45 (active).
    assertEquals(await log.applyRetention(0), 0, "nothing checkpointed: nothing may go");
    assertEquals(await log.applyRetention(20), 2, "segments ending at 10 and 20 are old and checkpointed");
    assertEquals(log.firstIndex, 21);
    assertEquals(await log.applyRetention(45), 1, "31-40 holds indexes inside the newest 15");
    assertEquals(log.firstIndex, 31);
    assertEquals(
      await collect(log, 1),
      Array.from({ length: 15 }, (_, i) => i + 31),
      "old index → oldest retained",
    );
    await log.close();
  }));

Deno.test("retention runs that overlap remove each segment once and appends go on", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir, { segmentIndexes: 5, retainIndexes: 1 });
    for (let i = 0; i < 12; i++) await log.append(body("o"));
    // Segments: 1-5, 6-10, 11-12 (active). Two maintenance runs at once must not drop the active segment.
    const removed = await Promise.all([log.applyRetention(12), log.applyRetention(12)]);
    assertEquals(removed[0]! + removed[1]!, 2);
    assertEquals(log.firstIndex, 11);
    const onDisk = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".ndjson")).length;
    assertEquals(onDisk, 1, "only the active segment is left");
    await log.append(body("after"));
    assertEquals(log.lastIndex, 13);
    assertEquals(await collect(log, 1), [11, 12, 13]);
    await log.close();
  }));

Deno.test("retention by bytes never removes the active segment and respects a reader's cursor", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir, { segmentIndexes: 5, retainBytes: 1, pinBytes: 10_000 });
    for (let i = 0; i < 12; i++) await log.append(body("b"));
    const cursor = log.openCursor(3);
    assertEquals(await log.applyRetention(12), 0, "the reader at 3 pins the segment 1-5");
    cursor.release();
    assertEquals(await log.applyRetention(12), 2);
    assertEquals(log.segmentCount, 1);
    assertEquals(await collect(log, 0), [11, 12]);
    await log.close();
  }));

Deno.test("subscribers see durable batches in index order and readers never see a torn line", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir);
    const seen: number[] = [];
    const unsubscribe = log.subscribe((b) => seen.push(b.index));
    const writes = Array.from({ length: 50 }, () => log.append(body("s")));
    const reads: number[] = [];
    for await (const { index } of log.read(1)) reads.push(index);
    await Promise.all(writes);
    unsubscribe();
    assertEquals(seen, Array.from({ length: 50 }, (_, i) => i + 1));
    assertEquals(reads, Array.from({ length: reads.length }, (_, i) => i + 1));
    await log.close();
  }));

Deno.test("a build error rejects only its own append", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir);
    const bad = log.append(() => {
      throw new Error("nope");
    });
    const good = log.append(body("g"));
    const [b, g] = await Promise.allSettled([bad, good]);
    assertEquals(b.status, "rejected");
    assertEquals(g.status === "fulfilled" ? g.value.index : -1, 1);
    await log.close();
  }));

Deno.test("event log reads lines larger than its read chunk intact", () =>
  withTempDir(async (dir) => {
    const log = await EventLog.open(dir);
    const big = "y".repeat(10_000);
    for (let i = 0; i < 5; i++) await log.append(() => ({ Events: [], big: big + i }));
    const lines: string[] = [];
    for await (const { line } of log.read(2, 1024)) lines.push(JSON.parse(line).big);
    assertEquals(lines, [1, 2, 3, 4].map((i) => big + i));
    await log.close();
  }));
