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

const cases: [string, string, string, number, number][] = [
  ["abc000001", "GET", "/v1/agent/health", 200, 0.004],
  ["abc000002", "PUT", "/api/v1/box/***", 201, 12.5],
  ["abc000003", "GET", '/caf\u00e9/"quoted"\\back', 404, 3],
  ["abc000004", "DELETE", "/x\u0001\u2028y", 500, 1234.567],
];

Deno.test("the stderr access log writes the same JSON as formatAccessLine, escapes included", async () => {
  const lines = await stderrLinesOf(`
    const logger = createLogger("info");
    for (const c of ${JSON.stringify(cases)}) logger.access(...c);
    logger.info("after", { n: 1 });
    flushLogs();
  `);
  assertEquals(lines.length, cases.length + 1);
  for (const [i, c] of cases.entries()) {
    const record = JSON.parse(lines[i]!);
    assertMatch(record.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assertEquals(lines[i], formatAccessLine(Date.parse(record.time), ...c));
    assertEquals([record.request_id, record.method, record.path, record.status], c.slice(0, 4));
    assertEquals(record.duration_ms, Math.round(c[4] * 100) / 100);
  }
  assertEquals(JSON.parse(lines[cases.length]!).msg, "after");
});

Deno.test("the stderr access log keeps every line of a burst larger than its buffer, in order", async () => {
  const lines = await stderrLinesOf(`
    const logger = createLogger("info");
    for (let i = 0; i < 5000; i++) logger.access("id" + i, "GET", "/p/" + i, 200, 1);
    flushLogs();
  `);
  assertEquals(lines.length, 5000);
  assertEquals(lines.map((l) => JSON.parse(l).request_id), Array.from({ length: 5000 }, (_, i) => "id" + i));
});

Deno.test("the access log is off below info level and formats durations with two decimals at most", () => {
  const quiet: string[] = [];
  createLogger("warn", (l) => quiet.push(l)).access("a", "GET", "/", 200, 1);
  assertEquals(quiet.length, 0);
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  for (const ms of [0, 0.001, 0.1, 0.25, 1.005, 7, 99.999]) logger.access("a", "GET", "/", 200, ms);
  assertEquals(
    lines.map((l) => JSON.parse(l).duration_ms),
    [0, 0, 0.1, 0.25, Math.round(1.005 * 100) / 100, 7, 100],
  );
});
