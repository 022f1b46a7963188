// Everything a handler of the auth family needs: the state, settings, hasher, throttle, caller resolution
// and the permission checks (docs/auth-methods.md#managing-auth-methods).

import { RateLimiter } from "../../lib/rate_limiter.ts";
import type { AppContext } from "../../lib/app.ts";
import { envDurationMs, envInt } from "../../lib/config.ts";
import { ApiError } from "../../lib/errors.ts";
import { readJson, type RequestContext } from "../../lib/http.ts";
import { isObject } from "./common.ts";
import { forbidden, unauthenticated } from "./errors.ts";
import { defaultArgon2 } from "./passwords.ts";
import { PasswordHasher } from "../../lib/password_hashing.ts";
import { KeyedTurns } from "../../lib/keyed_turns.ts";
import type { ActorCaller } from "./state.ts";
import { AuthState } from "./state.ts";
import { LoginThrottle } from "./throttle.ts";
import { FailureEvents, readFailureEventSettings } from "./failure_events.ts";
import { LdapConnectionPool } from "./ldap_pool.ts";
import { collections } from "./common.ts";
import { OidcAttempts } from "./oidc_attempts.ts";
import { CallerResolver, type TokenSettings } from "./tokens.ts";

export interface AuthSettings {
  defaultPageSize: number;
  tokens: TokenSettings;
  oidcTimeoutMs: number;
  ldapTimeoutMs: number;
}

export function readSettings(env: Readonly<Record<string, string>>): AuthSettings {
  return {
    defaultPageSize: envInt(env, "WHARF_DEFAULT_PAGE_SIZE", 1000, 1),
    tokens: {
      ttlMs: envDurationMs(env, "WHARF_AUTH_TOKEN_TTL", 7 * 86_400_000),
      staleMs: envDurationMs(env, "WHARF_AUTH_TOKEN_STALE", 86_400_000),
    },
    oidcTimeoutMs: envDurationMs(env, "WHARF_OIDC_HTTP_TIMEOUT", 10_000),
    ldapTimeoutMs: envDurationMs(env, "WHARF_LDAP_REQUEST_TIMEOUT", 5_000),
  };
}

/** How often dead (expired or idle) tokens are deleted. */
const tokenSweepMs = 10 * 60_000;

/** The parts of a list request that come from the service rather than the query (see listing.ts ListRequest). */
export function listEnvironment(svc: AuthService, url: URL) {
  return {
    url,
    defaultPageSize: svc.settings.defaultPageSize,
    keys: svc.app.data.keys,
    generation: svc.state.generation,
    cache: svc.state.listCache,
  };
}

export class AuthService {
  readonly app: AppContext;
  readonly state: AuthState;
  readonly settings: AuthSettings;
  readonly hasher: PasswordHasher;
  /**
   * Password writes (set/change) of one account, one at a time on this node: each checks the version after the
   * previous one committed, so of many on one version only the first hashes; the rest answer 409 at once.
   */
  readonly passwordTurns = new KeyedTurns({ maxWaitingPerKey: 1024, maxWaiting: 10_000 });
  readonly throttle: LoginThrottle;
  /** Failed and throttled logins' events, bounded per client address and per node. */
  readonly failureEvents: FailureEvents;
  readonly callers: CallerResolver;
  readonly oidc: OidcProtocol;
  readonly oidcAttempts: OidcAttempts;
  /** OIDC logins started per client address: each start is a durable write (docs/security.md). */
  readonly oidcStarts: RateLimiter;
  /** Idle LDAP connections per method, reused across logins (each login still binds as the user). */
  readonly ldapPool = new LdapConnectionPool({ maxIdlePerMethod: 16, idleMs: 30_000 });
  #unwatchMethods: () => void;
  #sweeper: ReturnType<typeof setInterval>;

  constructor(app: AppContext, oidc: OidcProtocol) {
    this.oidc = oidc;
    const env = app.config.env;
    this.app = app;
    this.settings = readSettings(env);
    this.state = new AuthState(app);
    this.hasher = new PasswordHasher({
      timeCost: envInt(env, "WHARF_ARGON2_TIME", defaultArgon2.timeCost, 1),
      memoryKib: envInt(env, "WHARF_ARGON2_MEMORY_KIB", defaultArgon2.memoryKib, 8),
      threads: envInt(env, "WHARF_ARGON2_THREADS", defaultArgon2.threads, 1),
    }, app.passwordHashing);
    this.hasher.warmUp();
    this.throttle = new LoginThrottle({
      nameThreshold: envInt(env, "WHARF_LOGIN_LOCKOUT_THRESHOLD", 5, 1),
      ipThreshold: envInt(env, "WHARF_IP_LOCKOUT_THRESHOLD", 20, 1),
      windowMs: envDurationMs(env, "WHARF_LOGIN_LOCKOUT_WINDOW", 15 * 60_000),
      lockMs: envDurationMs(env, "WHARF_LOGIN_LOCKOUT_DURATION", 15 * 60_000),
    });
    this.failureEvents = new FailureEvents(app.data.store, app.logger, readFailureEventSettings(env));
    this.callers = new CallerResolver(this.state, this.settings.tokens);
    this.oidcAttempts = new OidcAttempts(app, envDurationMs(env, "WHARF_OIDC_ATTEMPT_TTL", 5 * 60_000));
    const startsPerMinute = envInt(env, "WHARF_OIDC_STARTS_PER_MINUTE", 30, 0);
    this.oidcStarts = new RateLimiter(startsPerMinute / 60, startsPerMinute);
    // Dead tokens go, and tombstones past every list token's life (each deleted token leaves one).
    this.#sweeper = setInterval(() => {
      this.callers.sweep().catch(() => {});
      this.state.pruneTombstones().catch(() => {});
    }, tokenSweepMs);
    // A changed or deleted method retires its connections (the pool also compares connection settings).
    this.#unwatchMethods = app.data.store.watch(collections.methods, (c) => this.ldapPool.invalidate(c.id));
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.failureEvents.stop();
    this.#unwatchMethods();
    this.ldapPool.close();
    this.oidcAttempts.close();
    this.state.close();
  }

  caller(ctx: RequestContext): ActorCaller {
    return this.callers.resolve(ctx.request);
  }

  /** 401 for anonymous, 403 for a non-admin user. */
  requireAdmin(ctx: RequestContext): ActorCaller & { kind: "user" } {
    const c = this.caller(ctx);
    if (c.kind !== "user") throw unauthenticated();
    if (!c.admin) throw forbidden();
    return c;
  }

  requireUser(ctx: RequestContext): ActorCaller & { kind: "user" } {
    const c = this.caller(ctx);
    if (c.kind !== "user") throw unauthenticated();
    return c;
  }
}

/** The JSON body as an object; anything else (or nothing, when required) is a 400. */
export async function readObjectBody(ctx: RequestContext, required = true): Promise<Record<string, unknown>> {
  const body = await readJson(ctx);
  if (body === undefined && !required) return {};
  if (!isObject(body)) throw new ApiError(400, "Error in provided request.");
  return body;
}

/** The OIDC protocol pieces (routes/authmethods/login/oidc_client.ts), injected so handlers stay testable. */
export interface OidcProtocol {
  validateDiscoveredConfig(attrs: Record<string, unknown>, options: { timeoutMs: number }): Promise<string[]>;
  buildAuthUrl(
    attrs: Record<string, unknown>,
    options: { state: string; nonce: string; codeChallenge: string; redirectUri: string; timeoutMs: number },
  ): Promise<string>;
  exchangeCode(
    attrs: Record<string, unknown>,
    options: { code: string; codeVerifier: string; nonce: string; redirectUri: string; timeoutMs: number },
  ): Promise<
    | {
      ok: true;
      /** The ID token's claims with userinfo merged (the ID token's identity claims win). */
      claims: Record<string, unknown>;
      /** The ID token's claims and the userinfo answer apart, for managed-group filters (/token, /userinfo). */
      idToken?: Record<string, unknown>;
      userinfo?: Record<string, unknown>;
    }
    | { ok: false; reason: "idp_error" | "token_validation_failed"; message: string }
  >;
}
