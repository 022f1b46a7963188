// The registry's own settings, read once from the environment (docs/registry.md#configuration).

import { envBool, envDurationMs, envInt } from "../../../lib/config.ts";
import { ConfigError } from "../../../lib/errors.ts";
import type { Config } from "../../../lib/config.ts";

export interface RegistrySettings {
  publicUrl: string;
  trustProxy: boolean;
  adminPassword: string | undefined;
  tokenTtlMs: number;
  /** Lifetime of a service principal's token (expires_in of POST /oauth2/token). */
  spTokenTtlMs: number;
  uploadUrlTtlMs: number;
  maxUploadBytes: number;
  codeTtlMs: number;
  /** Shortest time between two SMS codes sent to one user (docs/security.md#throttles). */
  smsIntervalMs: number;
  smsWebhook: string | undefined;
  smsWebhookToken: string | undefined;
  totpIssuer: string;
  rateLimitRps: number;
  rateLimitBurst: number;
  loginFailures: number;
  maintenanceForced: boolean;
  /** Age a blob file must reach before an unreferenced one is deleted (covers ingest → commit). */
  orphanGraceMs: number;
}

export function loadRegistrySettings(config: Config): RegistrySettings {
  const env = config.env;
  const adminPassword = env.WHARF_REGISTRY_ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined && adminPassword.length < 8) {
    throw new ConfigError("WHARF_REGISTRY_ADMIN_PASSWORD must be at least 8 characters");
  }
  const smsWebhook = env.WHARF_SMS_WEBHOOK || undefined;
  if (smsWebhook !== undefined && !/^https?:\/\/\S+$/.test(smsWebhook)) {
    throw new ConfigError(`WHARF_SMS_WEBHOOK must be an http(s) URL, got ${JSON.stringify(smsWebhook)}`);
  }
  const spTokenTtlMs = envDurationMs(env, "WHARF_REGISTRY_SP_TOKEN_TTL", 3_600_000);
  if (spTokenTtlMs < 1000) throw new ConfigError("WHARF_REGISTRY_SP_TOKEN_TTL must be at least 1s");
  const smsIntervalMs = envDurationMs(env, "WHARF_2FA_SMS_INTERVAL", 30_000);
  // Sends are counted over the last hour: a longer interval could not be kept.
  if (!(smsIntervalMs >= 1000 && smsIntervalMs <= 3_600_000)) {
    throw new ConfigError("WHARF_2FA_SMS_INTERVAL must be between 1s and 1h");
  }
  return {
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    adminPassword,
    tokenTtlMs: envDurationMs(env, "WHARF_REGISTRY_TOKEN_TTL", 0),
    spTokenTtlMs,
    uploadUrlTtlMs: envDurationMs(env, "WHARF_UPLOAD_URL_TTL", 10 * 60_000),
    maxUploadBytes: envInt(env, "WHARF_MAX_UPLOAD_BYTES", 34_359_738_368, 1),
    codeTtlMs: envDurationMs(env, "WHARF_2FA_CODE_TTL", 5 * 60_000),
    smsIntervalMs,
    smsWebhook,
    smsWebhookToken: env.WHARF_SMS_WEBHOOK_TOKEN || undefined,
    totpIssuer: env.WHARF_TOTP_ISSUER || "wharf",
    rateLimitRps: envInt(env, "WHARF_RATE_LIMIT_RPS", 100, 0),
    rateLimitBurst: envInt(env, "WHARF_RATE_LIMIT_BURST", 200, 0),
    loginFailures: envInt(env, "WHARF_REGISTRY_LOGIN_FAILURES", 10, 1),
    maintenanceForced: envBool(env, "WHARF_MAINTENANCE", false),
    orphanGraceMs: envDurationMs(env, "WHARF_REGISTRY_ORPHAN_GRACE", 10_000),
  };
}
