// The access log's whole cost per line in process: recording 2,044,000 lines and writing them through the
// stderr sink (run with 2>/dev/null). Takes the log module to load, so a checkout before a change can be
// measured beside the current one: deno run -A bench/access_log_lines.ts [path/to/lib/log.ts] 2>/dev/null

const modulePath = Deno.args[0] ?? new URL("../lib/log.ts", import.meta.url).pathname;
const log = await import(new URL(modulePath, `file://${Deno.cwd()}/`).href);
const logger = log.createLogger("info");
// Sessions 1–4 took (requestId, method, path, status, durationMs); session 5 takes (sequence, method, path,
// status, startedMs, endedMs).
const current = logger.logsAccess !== undefined;
let sequence = 1_000_000;
let ended = 5000;
const started = performance.now();
for (let batch = 0; batch < 4000; batch++) {
  for (let i = 0; i < 511; i++) {
    ended += 0.0137;
    if (current) logger.access(++sequence, "GET", "/v1/agent/health", 200, ended - 0.013, ended);
    else logger.access(`AbCdEf${++sequence}`, "GET", "/v1/agent/health", 200, 0.013);
  }
  log.flushLogs();
}
const perLine = ((performance.now() - started) * 1000) / (4000 * 511);
console.log(`${modulePath}: ${perLine.toFixed(3)} µs per access line`);
