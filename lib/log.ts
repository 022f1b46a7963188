// Structured JSON logging to stderr, one line per record, filtered by level.

export type LogLevel = "debug" | "info" | "warn" | "error";
export const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error"];

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const encoder = new TextEncoder();

export interface Logger {
  readonly level: LogLevel;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** The per-request line (info level). Its fields are built by the router from safe values only. */
  access(fields: AccessFields): void;
}

export interface AccessFields {
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
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

// deno-lint-ignore no-control-regex -- control characters are exactly what JSON must escape
const needsEscape = /["\\\u0000-\u001f\u2028\u2029]/;

/** A JSON string literal, without JSON.stringify for the common case of nothing to escape. */
function jsonString(value: string): string {
  return needsEscape.test(value) ? JSON.stringify(value) : `"${value}"`;
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

export function createLogger(level: LogLevel, sink: (line: string) => void = writeStderr): Logger {
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[at] < rank[level]) return;
    const record = { time: nowIso(), level: at, msg, ...(fields ? redact(fields) : {}) };
    sink(JSON.stringify(record));
  };
  return {
    level,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    access: (f) => {
      if (rank.info < rank[level]) return;
      sink(
        `{"time":"${nowIso()}","level":"info","msg":"request","request_id":"${f.request_id}","method":${
          jsonString(f.method)
        },"path":${jsonString(f.path)},"status":${f.status},"duration_ms":${f.duration_ms}}`,
      );
    },
  };
}

let pending = "";
let pendingLines = 0;
let flushTimer: ReturnType<typeof setTimeout> | undefined;

/** Buffers lines and writes them in one syscall shortly after: a log line per request must stay cheap. */
function writeStderr(line: string): void {
  pending += line + "\n";
  if (++pendingLines >= 256) flushLogs();
  else flushTimer ??= setTimeout(flushLogs, 20);
}

/** Writes buffered log lines now (also called at shutdown). */
export function flushLogs(): void {
  if (flushTimer !== undefined) clearTimeout(flushTimer);
  flushTimer = undefined;
  if (pendingLines === 0) return;
  const text = pending;
  pending = "";
  pendingLines = 0;
  try {
    const bytes = encoder.encode(text);
    let offset = 0;
    while (offset < bytes.length) offset += Deno.stderr.writeSync(bytes.subarray(offset));
  } catch {
    // A closed stderr must never take the server down.
  }
}
