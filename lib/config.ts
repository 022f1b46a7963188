// Settings shared by every API family: flags win over WHARF_* environment variables, which win over defaults.

import { ConfigError } from "./errors.ts";
import { type LogLevel, logLevels } from "./log.ts";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  logLevel: LogLevel;
  /** scheme://host[:port] used for absolute URLs; empty = derive from the request. */
  publicUrl: string;
  /** Whether the first X-Forwarded-For hop is the client address. */
  trustProxy: boolean;
  /** Default request body limit for JSON bodies, in bytes. */
  maxBodyBytes: number;
  /** Milliseconds allowed for in-flight requests at shutdown. */
  shutdownGraceMs: number;
  /** Enables routes that only tests use (the crash test's write route). */
  testRoutes: boolean;
  /** WHARF_METRICS_TOKEN: a bearer token that may read /v1/metrics besides a management ACL token. */
  metricsToken: string | undefined;
  /** WHARF_METRICS_PUBLIC: /v1/metrics answers anyone (behind a proxy that restricts it). */
  metricsPublic: boolean;
  /** The environment the server was started with, for family-specific settings. */
  env: Readonly<Record<string, string>>;
}

const flagToEnv: Record<string, string> = {
  host: "WHARF_HOST",
  port: "WHARF_PORT",
  "data-dir": "WHARF_DATA_DIR",
  "log-level": "WHARF_LOG_LEVEL",
};

export const usage =
  "usage: wharf [--host HOST] [--port PORT] [--data-dir DIR] [--log-level debug|info|warn|error]";

/** Parses argv and env into a Config, throwing ConfigError with a one-line reason. */
export function loadConfig(args: readonly string[], env: Readonly<Record<string, string>>): Config {
  const values: Record<string, string> = {};
  for (const [flag, name] of Object.entries(flagToEnv)) {
    const v = env[name];
    if (v !== undefined && v !== "") values[flag] = v;
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") throw new ConfigError(usage);
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1]! in flagToEnv)) {
      throw new ConfigError(`unknown argument ${JSON.stringify(arg)}; ${usage}`);
    }
    let value = m[2];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new ConfigError(`--${m[1]} needs a value`);
    }
    values[m[1]!] = value;
  }
  const logLevel = (values["log-level"] ?? "info").toLowerCase();
  if (!logLevels.includes(logLevel as LogLevel)) {
    throw new ConfigError(`invalid log level ${JSON.stringify(logLevel)}: use debug, info, warn or error`);
  }
  const publicUrl = (env.WHARF_PUBLIC_URL ?? "").replace(/\/+$/, "");
  if (publicUrl && !/^https?:\/\/[^/\s]+$/.test(publicUrl)) {
    throw new ConfigError(`WHARF_PUBLIC_URL must be scheme://host[:port], got ${JSON.stringify(publicUrl)}`);
  }
  return {
    host: values.host ?? "127.0.0.1",
    port: parsePort(values.port ?? "8080"),
    dataDir: values["data-dir"] ?? "./data",
    logLevel: logLevel as LogLevel,
    publicUrl,
    trustProxy: envBool(env, "WHARF_TRUST_PROXY", false),
    maxBodyBytes: envInt(env, "WHARF_MAX_BODY_BYTES", 1 << 20, 1024),
    shutdownGraceMs: envDurationMs(env, "WHARF_SHUTDOWN_GRACE", 5000),
    testRoutes: envBool(env, "WHARF_TEST_ROUTES", false),
    metricsToken: metricsToken(env),
    metricsPublic: envBool(env, "WHARF_METRICS_PUBLIC", false),
    env,
  };
}

/** WHARF_METRICS_TOKEN: at least 16 printable characters without spaces (it is compared as sent). */
function metricsToken(env: Readonly<Record<string, string>>): string | undefined {
  const raw = env.WHARF_METRICS_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) {
    throw new ConfigError("WHARF_METRICS_TOKEN must be at least 16 printable characters without spaces");
  }
  return raw;
}

function parsePort(raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`invalid port ${JSON.stringify(raw)}: use 0-65535 (0 picks a free port)`);
  }
  return Number(raw);
}

/** An integer setting; absent or empty gives the default. */
export function envInt(
  env: Readonly<Record<string, string>>,
  name: string,
  fallback: number,
  min = 0,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** A boolean setting: 1/true/yes/on or 0/false/no/off. */
export function envBool(env: Readonly<Record<string, string>>, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(env[name])}`);
}

/** A duration setting in milliseconds: "500ms", "30s", "10m", "1h", "7d" or a bare number of ms. */
export function envDurationMs(env: Readonly<Record<string, string>>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const ms = parseDurationMs(raw);
  if (ms === undefined) {
    throw new ConfigError(`${name} must be a duration like 30s, 10m or 1h, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "1h30m", "500ms", "10s" or a bare integer of milliseconds; undefined when malformed. */
export function parseDurationMs(raw: string): number | undefined {
  if (/^\d+$/.test(raw)) return Number(raw);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
  let total = 0;
  let pos = 0;
  while (pos < raw.length) {
    re.lastIndex = pos;
    const m = re.exec(raw);
    if (!m) return undefined;
    total += Number(m[1]) * unitMs[m[2]!]!;
    pos = re.lastIndex;
  }
  return raw.length > 0 ? Math.round(total) : undefined;
}
