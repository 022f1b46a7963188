// The JSON logger and access log (lib/log.ts): the stderr line is formatAccessLine's byte for byte, its time, bursts.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { createLogger, formatAccessLine } from "../../lib/log.ts";

const logModule = new URL("../../lib/log.ts", import.meta.url).href;

/** Runs a child that writes access lines through the default (stderr) sink, and returns its stderr lines. */
async function stderrLinesOf(body: string): Promise<string[]> {
  const script = `import { createLogger, flushLogs } from ${JSON.stringify(logModule)};\n${body}`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stderr).split("\n").filter((l) => l !== "");
}

const cases: [number, string, string, number, number][] = [
  [1, "GET", "/v1/agent/health", 200, 0.004],
  [2, "PUT", "/api/v1/box/***", 201, 12.5],
  [3, "GET", '/caf\u00e9/"quoted"\\back', 404, 3],
  [4000000, "DELETE", "/x\u0001\u2028y", 500, 1234.567],
];

Deno.test("the stderr access log writes the same JSON as formatAccessLine, escapes included", async () => {
  const lines = await stderrLinesOf(`
    const logger = createLogger("info");
    for (const [sequence, method, path, status, ms] of ${JSON.stringify(cases)}) {
      const ended = performance.now();
      logger.access(sequence, method, path, status, ended - ms, ended);
    }
    logger.info("after", { n: 1 });
    flushLogs();
  `);
  assertEquals(lines.length, cases.length + 1);
  const prefix = JSON.parse(lines[0]!).request_id.slice(0, -1);
  assertMatch(prefix, /^[0-9A-Za-z]{6}$/);
  for (const [i, [sequence, method, path, status, ms]] of cases.entries()) {
    const record = JSON.parse(lines[i]!);
    assertMatch(record.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assertEquals(record.request_id, prefix + sequence);
    assertEquals(
      lines[i],
      formatAccessLine(Date.parse(record.time), record.request_id, method, path, status, ms),
    );
    assertEquals([record.method, record.path, record.status], [method, path, status]);
    assertEquals(record.duration_ms, Math.round(ms * 100) / 100);
  }
  assertEquals(JSON.parse(lines[cases.length]!).msg, "after");
});

Deno.test("the stderr access line is byte for byte formatAccessLine's for varied values", async () => {
  // Sequences past 2^31, every status class, durations at rounding edges, escaped and non-ASCII values.
  const lines = await stderrLinesOf(`
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const methods = ["GET", "POST", "DELETE", "M\\"X", "PATCH"];
    const paths = ["/", "/v1/agent/health", "/api/v1/box/u/b/version/1.0.0", "/p\\u00e9", "/a b", "/x\\\\y"];
    const durations = [0, 0.004, 0.005, 0.015, 0.1, 0.99, 0.999, 1, 9.995, 10, 100.5, 12345.678, -1, NaN, 1e13];
    const calls = [];
    for (let i = 0; i < 600; i++) {
      const sequence = i % 3 === 0 ? 2 ** 31 - 2 + i : i % 3 === 1 ? 2 ** 40 + i : i + 1;
      const ms = i < durations.length ? durations[i] : next() * (i % 2 ? 3 : 3000);
      const ended = 1000 + i;
      const call = [sequence, methods[i % methods.length], paths[i % paths.length], 100 + (i % 500), ended - ms, ended];
      calls.push(call);
      logger.access(...call);
    }
    flushLogs();
    console.error(JSON.stringify(calls));
  `.replace("let seed", 'const logger = createLogger("info");\n    let seed'));
  const calls = JSON.parse(lines.pop()!) as [number, string, string, number, number, number][];
  assertEquals(lines.length, calls.length);
  const prefix = JSON.parse(lines[2]!).request_id.slice(0, -1); // the third call's sequence is 3
  for (const [i, [sequence, method, path, status, started, ended]] of calls.entries()) {
    const time = Date.parse(JSON.parse(lines[i]!).time);
    const expected = formatAccessLine(
      time,
      prefix + sequence,
      method,
      path,
      status,
      ended - (started ?? NaN),
    );
    assertEquals(lines[i], expected, `call ${i}`);
  }
});

Deno.test("an access line's time is the wall clock when its request ended, though it is written later", async () => {
  const [line, bounds] = await stderrLinesOf(`
    const logger = createLogger("info");
    const before = Date.now();
    const ended = performance.now() - 3000;
    logger.access(1, "GET", "/", 200, ended - 1, ended);
    const after = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    flushLogs();
    console.error(JSON.stringify([before, after]));
  `);
  const time = Date.parse(JSON.parse(line!).time);
  const [before, after] = JSON.parse(bounds!);
  // Ended 3 s before it was logged, written 300 ms after: its time is 3 s before the call, not the write.
  assert(
    time >= before - 3000 - 2 && time <= after - 3000 + 2,
    `${time} not within [${before}, ${after}] - 3 s`,
  );
});

Deno.test("the stderr access log keeps every line of a burst larger than its buffer, in order", async () => {
  const lines = await stderrLinesOf(`
    const logger = createLogger("info");
    for (let i = 0; i < 5000; i++) {
      logger.access(i + 1, "GET", "/p/" + i, 200, 0, 1);
      if (i % 700 === 0) logger.warn("marker", { i });
    }
    flushLogs();
  `);
  assertEquals(lines.length, 5000 + 8);
  const records = lines.map((l) => JSON.parse(l));
  const expected = Array.from(
    { length: 5000 },
    (_, i) => [`/p/${i}`, ...(i % 700 === 0 ? [`marker ${i}`] : [])],
  );
  assertEquals(records.map((r) => r.msg === "marker" ? `marker ${r.i}` : r.path), expected.flat());
  const prefix = records[0].request_id.slice(0, -1);
  assertEquals(
    records.filter((r) => r.msg === "request").map((r) => r.request_id),
    Array.from({ length: 5000 }, (_, i) => prefix + (i + 1)),
  );
});

Deno.test("the access log is off below info level and formats durations with two decimals at most", () => {
  const quiet: string[] = [];
  const off = createLogger("warn", (l) => quiet.push(l));
  off.access(1, "GET", "/", 200, 0, 1);
  assertEquals([quiet.length, off.logsAccess, createLogger("info").logsAccess], [0, false, true]);
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  for (const ms of [0, 0.001, 0.1, 0.25, 1.005, 7, 99.999]) logger.access(1, "GET", "/", 200, 10, 10 + ms);
  assertEquals(
    lines.map((l) => JSON.parse(l).duration_ms),
    [0, 0, 0.1, 0.25, Math.round(1.005 * 100) / 100, 7, 100],
  );
});
