// The family's own settings, read from the environment (bad values stop the server with exit code 2).

import type { AppContext } from "../../lib/app.ts";
import { envBool, envDurationMs, envInt } from "../../lib/config.ts";
import { ConfigError } from "../../lib/errors.ts";
import { uuidPattern } from "../../lib/ids.ts";
import type { TokenGcSettings } from "./acl_token_gc.ts";

/**
 * The default cap on open streams: a stream whose reader stopped reading holds up to 768 KiB (mostly Deno's HTTP
 * layer), so 400 of them hold at most 300 MiB (docs/events.md "Stream limits").
 */
export const defaultMaxStreams = 400;

/** Tokens per garbage-collection commit at most: Nomad's ACLMaxExpiredBatchSize. */
export const maxTokenGcBatch = 4096;

export interface EventsSettings {
  aclEnabled: boolean;
  bootstrapSecret: string | undefined;
  tokenMinTtlMs: number;
  tokenMaxTtlMs: number;
  /** How long a one-time token may be exchanged (Nomad: 10 minutes). */
  oneTimeTokenTtlMs: number;
  /** Expired tokens' garbage collection: sweep interval, age threshold, tokens per sweep (acl_token_gc.ts). */
  tokenGc: TokenGcSettings;
  heartbeatMs: number;
  queueBatches: number;
  queueBytes: number;
  /** Concurrent streams on this node, all callers together (0 = no cap). */
  maxStreams: number;
  /** Concurrent streams per token; tokenless callers count per client IP (0 = no cap). */
  maxStreamsPerToken: number;
  /** Pending SSO logins (`/v1/acl/oidc/auth-url`) one client address may start a minute on a node (0 = no limit). */
  oidcStartsPerMinute: number;
}

export function loadEventsSettings(ctx: AppContext): EventsSettings {
  const env = ctx.config.env;
  const bootstrapSecret = env.WHARF_ACL_BOOTSTRAP_SECRET || undefined;
  if (bootstrapSecret !== undefined && !uuidPattern.test(bootstrapSecret)) {
    throw new ConfigError("WHARF_ACL_BOOTSTRAP_SECRET must be a UUID");
  }
  const settings: EventsSettings = {
    aclEnabled: envBool(env, "WHARF_ACL_ENABLED", true),
    bootstrapSecret,
    tokenMinTtlMs: envDurationMs(env, "WHARF_ACL_TOKEN_MIN_TTL", 60_000),
    tokenMaxTtlMs: envDurationMs(env, "WHARF_ACL_TOKEN_MAX_TTL", 24 * 3_600_000),
    oneTimeTokenTtlMs: envDurationMs(env, "WHARF_ACL_ONE_TIME_TOKEN_TTL", 10 * 60_000),
    tokenGc: {
      intervalMs: envDurationMs(env, "WHARF_ACL_TOKEN_GC_INTERVAL", 5 * 60_000),
      thresholdMs: envDurationMs(env, "WHARF_ACL_TOKEN_GC_THRESHOLD", 3_600_000),
      batch: envInt(env, "WHARF_ACL_TOKEN_GC_BATCH", 1000, 1),
    },
    heartbeatMs: envInt(env, "WHARF_EVENTS_HEARTBEAT_MS", 30_000, 1),
    queueBatches: envInt(env, "WHARF_EVENTS_QUEUE_BATCHES", 64, 1),
    queueBytes: envInt(env, "WHARF_EVENTS_QUEUE_BYTES", 4 * 1024 * 1024, 1024),
    maxStreams: envInt(env, "WHARF_EVENTS_MAX_STREAMS", defaultMaxStreams),
    maxStreamsPerToken: envInt(env, "WHARF_EVENTS_MAX_STREAMS_PER_TOKEN", 100),
    // The auth-methods family's setting: one limit for OIDC logins started, whichever API starts them.
    oidcStartsPerMinute: envInt(env, "WHARF_OIDC_STARTS_PER_MINUTE", 30, 0),
  };
  // setInterval runs a longer delay than 2^31-1 ms at once, as it does 0.
  if (settings.tokenGc.intervalMs < 1 || settings.tokenGc.intervalMs > 2 ** 31 - 1) {
    throw new ConfigError("WHARF_ACL_TOKEN_GC_INTERVAL must be between 1ms and 24d");
  }
  // Each token of a batch holds two locks in its commit (PostgreSQL's lock table is shared by every session).
  if (settings.tokenGc.batch > maxTokenGcBatch) {
    throw new ConfigError(`WHARF_ACL_TOKEN_GC_BATCH must be at most ${maxTokenGcBatch} (Nomad's batch size)`);
  }
  if (settings.tokenMinTtlMs > settings.tokenMaxTtlMs) {
    throw new ConfigError("WHARF_ACL_TOKEN_MIN_TTL must not exceed WHARF_ACL_TOKEN_MAX_TTL");
  }
  return settings;
}
