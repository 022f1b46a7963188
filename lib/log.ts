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

export function createLogger(level: LogLevel, sink: (line: string) => void = writeStderr): Logger {
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[at] < rank[level]) return;
    const record = { time: new Date().toISOString(), level: at, msg, ...(fields ? redact(fields) : {}) };
    sink(JSON.stringify(record));
  };
  return {
    level,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

function writeStderr(line: string): void {
  try {
    Deno.stderr.writeSync(encoder.encode(line + "\n"));
  } catch {
    // A closed stderr must never take the server down.
  }
}
