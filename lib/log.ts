// Structured JSON logging to stderr, one line per record, filtered by level.

import { formatAccessLine } from "./access_line.ts";
import { recordAccess, writeLogLine } from "./log_sink.ts";
import { requestIdOf } from "./request_id.ts";

export { formatAccessLine } from "./access_line.ts";
export { flushLogs } from "./log_sink.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error"];

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  readonly level: LogLevel;
  /** Whether access() writes anything: when it does not, callers need not read clocks for it. */
  readonly logsAccess: boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /**
   * The per-request line (info level): request_id (`requestIdOf(sequence)`), method, path, status and
   * duration_ms from two `performance.now()` readings; its time is the wall clock at `endedMs`. The caller passes
   * safe values only (the router strips the query and redacts secret path parameters).
   */
  access(
    sequence: number,
    method: string,
    path: string,
    status: number,
    startedMs: number,
    endedMs: number,
  ): void;
}

/** Keys whose values are never written, whatever the caller passes. */
const secretKey = /pass(word)?|secret|token|authorization|cookie|code|key/i;

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = secretKey.test(k) && k !== "request_id" ? "[redacted]" : v;
  }
  return out;
}

let isoMs = 0;
let isoText = "";

/** The current time as ISO 8601, formatted at most once per millisecond. */
function nowIso(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

export function createLogger(level: LogLevel, sink?: (line: string) => void): Logger {
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[at] < rank[level]) return;
    const record = { time: nowIso(), level: at, msg, ...(fields ? redact(fields) : {}) };
    (sink ?? writeLogLine)(JSON.stringify(record));
  };
  const accessOn = rank.info >= rank[level];
  return {
    level,
    logsAccess: accessOn,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    access: !accessOn
      ? () => {}
      : sink
      ? (sequence, method, path, status, startedMs, endedMs) =>
        sink(formatAccessLine(Date.now(), requestIdOf(sequence), method, path, status, endedMs - startedMs))
      : recordAccess,
  };
}
