// OIDC login flow (spec §7.3-7.5): start/login creates an attempt and the auth URL; the callback (GET
// routes or POST command) exchanges the code and makes a pending token; `token` polls collect it once.

import { createHash } from "node:crypto";
import { ApiError } from "../../lib/errors.ts";
import { json, type RequestContext } from "../../lib/http.ts";
import { randomSecret } from "../../lib/ids.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { callbackUrl } from "./attrs_oidc.ts";
import type { AuthRequest } from "./authenticate.ts";
import {
  deliverToken,
  identityLocks,
  loginCommit,
  loginParentLocks,
  recordFailure,
  upsertExternalAccount,
} from "./authenticate.ts";
import { assertIdFormat, collections, isObject, lockKeys, parentLocks } from "./common.ts";
import { failedPrecondition, fieldError, forbidden, notFound } from "./errors.ts";
import type { AuthService } from "./service.ts";
import { tokenDeletedEvent } from "./state.ts";
import type { MethodDoc } from "./state.ts";
import { mintToken, type NewToken, tokenIssuedEvent } from "./tokens.ts";

interface Attempt {
  methodId: string;
  nonce: string;
  codeVerifier: string;
  tokenIdHash: string;
  expiresAt: number;
  status: "started" | "ready" | "failed" | "collected";
  roundtrip?: unknown;
  delivery: "token" | "cookie";
  typeEcho: string | undefined;
  token?: NewToken;
}

const maxRoundtripBytes = 4096;
/** Open attempts are held in memory until they expire; this bounds what a flood of `start` calls can take. */
const maxOpenAttempts = 50_000;

/** In-memory attempts keyed by the hashes of their state and token_id; they die after the TTL. */
export class OidcAttempts {
  readonly ttlMs: number;
  readonly byState = new Map<string, Attempt>();
  readonly byTokenId = new Map<string, Attempt>();
  #timer: ReturnType<typeof setInterval>;
  #svc: AuthService;

  constructor(svc: AuthService, ttlMs: number) {
    this.#svc = svc;
    this.ttlMs = ttlMs;
    this.#timer = setInterval(() => this.sweep().catch(() => {}), Math.min(30_000, Math.max(250, ttlMs / 4)));
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /** Drops expired attempts; a token nobody collected dies with its attempt. */
  async sweep(now = Date.now()): Promise<void> {
    const dead: NewToken[] = [];
    for (const [k, a] of this.byTokenId) {
      if (a.expiresAt > now) continue;
      this.byTokenId.delete(k);
      if (a.status === "ready" && a.token) dead.push(a.token);
    }
    for (const [k, a] of this.byState) if (a.expiresAt <= now) this.byState.delete(k);
    if (!dead.length) return;
    const store = this.#svc.state.store;
    // The locks every token deleter takes: a logout or cascade that got there first leaves nothing to delete
    // (and no second AuthTokenDeleted event).
    await store.transact(dead.map((t) => lockKeys.token(t.id)), () => {
      const live = dead.filter((t) => store.get(collections.tokens, t.id));
      return {
        writes: live.map((t) => ({ collection: collections.tokens, id: t.id, doc: null })),
        events: live.map((t) => tokenDeletedEvent(t.id, t.doc, "uncollected")),
      };
    }, { sharedLocks: parentLocks(dead.map((t) => t.doc)) });
  }
}

export async function oidcCommand(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
): Promise<Response> {
  const command = req.command ?? "start";
  if (command === "start" || command === "login") return await start(svc, ctx, req, command);
  if (command === "callback") return await callback(svc, ctx, req.attributes, req.id);
  if (command === "token") return collect(svc, ctx, req);
  throw fieldError({ name: "command", description: "Invalid command for this auth method type." });
}

async function start(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
  command: string,
): Promise<Response> {
  if (req.method.attributes.state === "inactive") {
    await recordFailure(svc, ctx, req.id, "", "inactive");
    throw failedPrecondition("Cannot start authentication against an inactive OIDC auth method");
  }
  const roundtrip = req.attributes.roundtrip_payload;
  if (roundtrip !== undefined && roundtrip !== null) {
    if (
      !isObject(roundtrip) || new TextEncoder().encode(JSON.stringify(roundtrip)).length > maxRoundtripBytes
    ) {
      throw fieldError({
        name: "attributes.roundtrip_payload",
        description: "Must be a JSON object of at most 4 KiB.",
      });
    }
  }
  if (svc.oidcAttempts.byState.size >= maxOpenAttempts) {
    throw new ApiError(503, "Server is busy, retry later.");
  }
  const state = randomSecret(32);
  const nonce = randomSecret(32);
  const codeVerifier = randomSecret(32);
  const tokenId = `oidc_${randomSecret(24)}`;
  const codeChallenge = createHash("sha256").update(codeVerifier).digest("base64url");
  let authUrl: string;
  try {
    authUrl = await svc.oidc.buildAuthUrl(svc.state.openAttributes(req.id, req.method), {
      state,
      nonce,
      codeChallenge,
      redirectUri: callbackUrl(String(req.method.attributes.api_url_prefix ?? "")),
      timeoutMs: svc.settings.oidcTimeoutMs,
    });
  } catch (err) {
    throw new ApiError(
      500,
      `Error generating parameters for starting the OIDC flow: ${(err as Error).message}`,
      {
        details: { publicMessage: true },
      },
    );
  }
  const attempt: Attempt = {
    methodId: req.id,
    nonce,
    codeVerifier,
    tokenIdHash: sha256Hex(tokenId),
    expiresAt: Date.now() + svc.oidcAttempts.ttlMs,
    status: "started",
    ...(roundtrip !== undefined && roundtrip !== null ? { roundtrip } : {}),
    delivery: req.delivery,
    typeEcho: req.typeEcho,
  };
  svc.oidcAttempts.byState.set(sha256Hex(state), attempt);
  svc.oidcAttempts.byTokenId.set(attempt.tokenIdHash, attempt);
  return json({
    command,
    ...(req.typeEcho ? { type: req.typeEcho } : {}),
    attributes: { auth_url: authUrl, token_id: tokenId },
  });
}

/** GET /v1/auth-methods/oidc:authenticate:callback and GET /v1/auth-methods/{id}:authenticate:callback. */
export async function callbackRoute(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id;
  if (id !== undefined) {
    assertIdFormat(id, ["amoidc", "ampw", "amldap"]);
    if (!id.startsWith("amoidc_")) {
      throw fieldError({
        name: "request_path",
        description: "The callback is only available for OIDC auth methods.",
      });
    }
  }
  const q = ctx.url.searchParams;
  const attrs: Record<string, unknown> = {};
  for (const k of ["code", "state", "error", "error_description", "error_uri"]) {
    const v = q.get(k);
    if (v !== null) attrs[k] = v;
  }
  return await callback(svc, ctx, attrs, id, false);
}

async function callback(
  svc: AuthService,
  ctx: RequestContext,
  attrs: Record<string, unknown>,
  methodId: string | undefined,
  asCommand = true,
): Promise<Response> {
  const str = (
    k: string,
  ) => (typeof attrs[k] === "string" && attrs[k] !== "" ? attrs[k] as string : undefined);
  const state = str("state");
  const code = str("code");
  const error = str("error");
  if (!state) throw fieldError({ name: "attributes.state", description: "This is a required field." });
  if (!code && !error) {
    throw fieldError({ name: "attributes.code", description: "Either code or error is required." });
  }
  const stateHash = sha256Hex(state);
  const attempt = svc.oidcAttempts.byState.get(stateHash);
  if (
    !attempt || attempt.expiresAt <= Date.now() || (methodId !== undefined && attempt.methodId !== methodId)
  ) {
    throw new ApiError(400, "Unknown or expired authentication attempt.");
  }
  svc.oidcAttempts.byState.delete(stateHash);
  const method = svc.state.method(attempt.methodId);
  if (!method) throw notFound();
  const prefix = String(method.doc.attributes.api_url_prefix ?? "");
  let finalUrl: string;
  const fail = async (reason: string, message: string) => {
    attempt.status = "failed";
    svc.app.logger.info("oidc callback failed", {
      auth_method_id: attempt.methodId,
      reason,
      detail: message,
    });
    await recordFailure(svc, ctx, attempt.methodId, "", reason);
    const err = JSON.stringify({ kind: "Unauthenticated", message: `Unable to authenticate: ${message}` });
    return `${prefix}/authentication-error?error=${encodeURIComponent(err)}`;
  };
  if (error) {
    finalUrl = await fail(
      "idp_error",
      `the identity provider returned ${error}${
        str("error_description") ? `: ${str("error_description")}` : ""
      }`,
    );
  } else {
    const result = await svc.oidc.exchangeCode(svc.state.openAttributes(attempt.methodId, method.doc), {
      code: code!,
      codeVerifier: attempt.codeVerifier,
      nonce: attempt.nonce,
      redirectUri: callbackUrl(prefix),
      timeoutMs: svc.settings.oidcTimeoutMs,
    });
    if (!result.ok) finalUrl = await fail(result.reason, result.message);
    else {
      await finishLogin(svc, ctx, attempt, method.doc, result.claims);
      finalUrl = `${prefix}/authentication-complete` +
        (attempt.roundtrip !== undefined
          ? `?roundtrip_payload=${encodeURIComponent(JSON.stringify(attempt.roundtrip))}`
          : "");
    }
  }
  const headers = { Location: finalUrl };
  if (!asCommand) return new Response(null, { status: 302, headers });
  return json({ command: "callback", attributes: { final_redirect_url: finalUrl } }, 302, headers);
}

/** Claims → account (method, issuer, sub) with its user; the token is committed now and collected later. */
async function finishLogin(
  svc: AuthService,
  ctx: RequestContext,
  attempt: Attempt,
  method: MethodDoc,
  claims: Record<string, unknown>,
): Promise<void> {
  const maps = new Map<string, string>();
  for (
    const m of Array.isArray(method.attributes.account_claim_maps) ? method.attributes.account_claim_maps : []
  ) {
    const [from, to] = String(m).split("=").map((s) => s.trim());
    if (from && to) maps.set(to, from);
  }
  const claim = (to: string) => {
    const v = claims[maps.get(to) ?? to];
    return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
  };
  const issuer = typeof claims.iss === "string" ? claims.iss : String(method.attributes.issuer ?? "");
  const subject = claim("sub") ?? "";
  const attributes: Record<string, unknown> = { issuer, subject };
  const fullName = claim("name");
  const email = claim("email");
  if (fullName) attributes.full_name = fullName;
  if (email) attributes.email = email;
  const key = `${issuer}\u0000${subject}`;
  const locks = identityLocks(svc, attempt.methodId, key);
  const { result: minted } = await loginCommit(svc.state.store.transact(locks, () => {
    if (!svc.state.method(attempt.methodId)) throw notFound();
    const who = upsertExternalAccount(svc, { id: attempt.methodId, method }, key, attributes);
    const token = mintToken(svc.settings.tokens, {
      ...who,
      methodId: attempt.methodId,
      scopeId: method.scope_id,
    });
    return {
      writes: [...who.writes, { collection: collections.tokens, id: token.id, doc: token.doc, ifVersion: 0 }],
      events: [tokenIssuedEvent(token, attempt.delivery, ctx.clientIp)],
      result: token,
    };
  }, { sharedLocks: loginParentLocks(attempt.methodId, method) }));
  attempt.token = minted;
  attempt.status = "ready";
}

function collect(svc: AuthService, ctx: RequestContext, req: AuthRequest): Response {
  const tokenId = req.attributes.token_id;
  if (typeof tokenId !== "string" || tokenId === "") {
    throw fieldError({ name: "attributes.token_id", description: "This is a required field." });
  }
  const key = sha256Hex(tokenId);
  const attempt = svc.oidcAttempts.byTokenId.get(key);
  if (
    !attempt || attempt.methodId !== req.id || attempt.expiresAt <= Date.now() ||
    attempt.status === "collected"
  ) {
    throw forbidden();
  }
  if (attempt.status === "started") return json({ command: "token" }, 202);
  attempt.status = "collected";
  if (!attempt.token) throw new ApiError(401, "Unable to authenticate.");
  if (!svc.state.get(collections.tokens, attempt.token.id)) throw forbidden();
  return deliverToken(
    svc,
    ctx,
    "token",
    req.typeEcho ?? attempt.typeEcho,
    req.delivery === "cookie" || attempt.delivery === "cookie" ? "cookie" : "token",
    attempt.token,
  );
}
