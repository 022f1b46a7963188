// OIDC login flow (docs/auth-methods.md#oidc): start/login creates a durable attempt (oidc_attempts.ts) and
// the auth URL; the callback (GET routes or POST command) exchanges the code and makes a pending token;
// `token` collects it once.

import { createHash } from "node:crypto";
import { ApiError } from "../../../lib/errors.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import { randomSecret } from "../../../lib/ids.ts";
import { callbackUrl } from "../methods/attrs_oidc.ts";
import { identityLocks, upsertExternalAccount } from "./external_accounts.ts";
import { matchingOidcGroups } from "../managed_groups/managed_groups_model.ts";
import type { AuthRequest } from "./login_request.ts";
import { recordFailure } from "./login_failures.ts";
import { deliverToken, loginCommit, loginParentLocks } from "./token_delivery.ts";
import { assertIdFormat, collections, isObject } from "../common.ts";
import { failedPrecondition, fieldError, forbidden, notFound } from "../errors.ts";
import { AttemptExpiredError, type RedeemedAttempt } from "../oidc_attempts.ts";
import type { AuthService } from "../service.ts";
import type { MethodDoc } from "../state.ts";
import { cookieValue, mintToken, tokenIssuedEvent } from "../tokens.ts";

const maxRoundtripBytes = 4096;

export async function oidcCommand(
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
): Promise<Response> {
  const command = req.command ?? "start";
  if (command === "start" || command === "login") return await start(svc, ctx, req, command);
  if (command === "callback") return await callback(svc, ctx, req.attributes, req.id);
  if (command === "token") return await collect(svc, ctx, req);
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
  const { authUrl, tokenId } = await beginAttempt(svc, ctx.clientIp, req.id, req.method, {
    roundtrip: roundtrip ?? undefined,
    delivery: req.delivery,
    typeEcho: req.typeEcho,
  });
  return json({
    command,
    ...(req.typeEcho ? { type: req.typeEcho } : {}),
    attributes: { auth_url: authUrl, token_id: tokenId },
  });
}

/**
 * A new attempt of the method (state, nonce and PKCE verifier made here, durable before the answer) and the
 * provider's URL: what `start` answers, and what the registry's console sign-in starts
 * (docs/identity.md#oidc-sign-in). `completePath`: where the callback sends the browser instead of the
 * completion pages, under the method's api_url_prefix.
 */
export async function beginAttempt(
  svc: AuthService,
  clientIp: string,
  methodId: string,
  method: MethodDoc,
  options: {
    roundtrip?: unknown;
    delivery: "token" | "cookie";
    typeEcho?: string;
    completePath?: string;
    bindingCookie?: string;
  },
): Promise<{ authUrl: string; tokenId: string }> {
  // Each start is a durable write: a stranger's starts are bounded per address (docs/security.md).
  const wait = svc.oidcStarts.take(clientIp);
  if (wait > 0) {
    throw new ApiError(429, `Too many OIDC logins started from this address; try again in ${wait} seconds.`, {
      headers: { "Retry-After": String(wait) },
    });
  }
  svc.oidcAttempts.assertRoom();
  const state = randomSecret(32);
  const nonce = randomSecret(32);
  const codeVerifier = randomSecret(32);
  const tokenId = `oidc_${randomSecret(24)}`;
  const codeChallenge = createHash("sha256").update(codeVerifier).digest("base64url");
  let authUrl: string;
  try {
    authUrl = await svc.oidc.buildAuthUrl(svc.state.openAttributes(methodId, method), {
      state,
      nonce,
      codeChallenge,
      redirectUri: callbackUrl(String(method.attributes.api_url_prefix ?? "")),
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
  // Durable before the answer: the attempt outlives a restart while the user is at the provider.
  await svc.oidcAttempts.create({
    tokenId,
    state,
    methodId,
    secrets: {
      nonce,
      code_verifier: codeVerifier,
      ...(options.roundtrip !== undefined ? { roundtrip_payload: options.roundtrip } : {}),
      ...(options.completePath ? { complete_path: options.completePath } : {}),
      ...(options.bindingCookie ? { binding_cookie: options.bindingCookie } : {}),
    },
    delivery: options.delivery,
    typeEcho: options.typeEcho,
  });
  return { authUrl, tokenId };
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
  // Consumes the state durably before the provider is called: a replayed callback fails, even after a restart.
  const attempt = await svc.oidcAttempts.redeem(state, methodId);
  const attemptMethodId = attempt.doc.auth_method_id;
  const method = svc.state.method(attemptMethodId);
  if (!method) throw notFound();
  const prefix = String(method.doc.attributes.api_url_prefix ?? "");
  let finalUrl: string;
  const fail = async (reason: string, message: string) => {
    svc.app.logins.record("oidc", "failure");
    await svc.oidcAttempts.fail(attempt);
    svc.app.logger.info("oidc callback failed", {
      auth_method_id: attemptMethodId,
      reason,
      detail: message,
    });
    await recordFailure(svc, ctx, attemptMethodId, "", reason);
    const err = JSON.stringify({ kind: "Unauthenticated", message: `Unable to authenticate: ${message}` });
    // A console sign-in's page collects the attempt and shows the failure itself.
    if (attempt.secrets.complete_path) return `${prefix}${attempt.secrets.complete_path}`;
    return `${prefix}/authentication-error?error=${encodeURIComponent(err)}`;
  };
  if (attempt.secrets.complete_path && !startedHere(svc, ctx, attempt)) {
    // A console sign-in completes only in the browser that started it: another browser sent the provider's
    // URL would otherwise sign its person in for whoever started the attempt (login CSRF).
    finalUrl = await fail("other_browser", "the sign-in was started in another browser");
  } else if (error) {
    finalUrl = await fail(
      "idp_error",
      `the identity provider returned ${error}${
        str("error_description") ? `: ${str("error_description")}` : ""
      }`,
    );
  } else {
    const result = await svc.oidc.exchangeCode(svc.state.openAttributes(attemptMethodId, method.doc), {
      code: code!,
      codeVerifier: attempt.secrets.code_verifier,
      nonce: attempt.secrets.nonce,
      redirectUri: callbackUrl(prefix),
      timeoutMs: svc.settings.oidcTimeoutMs,
    });
    const finished = result.ok &&
      await finishLogin(svc, ctx, attempt, method.doc, result).then(() => true, (err) => {
        if (err instanceof AttemptExpiredError) return false;
        throw err;
      });
    if (!result.ok) finalUrl = await fail(result.reason, result.message);
    else if (!finished) finalUrl = await fail("expired", "the authentication attempt expired");
    else if (attempt.secrets.complete_path) finalUrl = `${prefix}${attempt.secrets.complete_path}`;
    else {
      svc.app.logins.record("oidc", "success");
      const roundtrip = attempt.secrets.roundtrip_payload;
      finalUrl = `${prefix}/authentication-complete` +
        (roundtrip !== undefined
          ? `?roundtrip_payload=${encodeURIComponent(JSON.stringify(roundtrip))}`
          : "");
    }
  }
  const headers = { Location: finalUrl };
  if (!asCommand) return new Response(null, { status: 302, headers });
  return json({ command: "callback", attributes: { final_redirect_url: finalUrl } }, 302, headers);
}

/** Whether the callback's browser keeps the token id of the console sign-in `attempt` (lib/identity.ts). */
function startedHere(svc: AuthService, ctx: RequestContext, attempt: RedeemedAttempt): boolean {
  const name = attempt.secrets.binding_cookie;
  const bound = name ? cookieValue(ctx.request.headers.get("Cookie") ?? "", name) : undefined;
  return svc.oidcAttempts.isTokenOf(attempt, bound?.slice(bound.lastIndexOf(".") + 1));
}

/**
 * Claims → account (method, issuer, sub) with its user; the token is committed now, in the same commit that
 * makes the attempt ready (its secret sealed there), and collected later. A registry console sign-in's attempt
 * is made ready with the account and user instead, and no token is minted.
 */
async function finishLogin(
  svc: AuthService,
  ctx: RequestContext,
  attempt: RedeemedAttempt,
  method: MethodDoc,
  result: {
    claims: Record<string, unknown>;
    idToken?: Record<string, unknown>;
    userinfo?: Record<string, unknown>;
  },
): Promise<void> {
  const claims = result.claims;
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
  const methodId = attempt.doc.auth_method_id;
  const locks = [...identityLocks(svc, methodId, key), svc.oidcAttempts.lockOf(attempt)];
  // A registry console sign-in mints no token: the registry signs the person in (docs/identity.md#oidc-sign-in).
  const forConsole = attempt.secrets.complete_path !== undefined;
  await loginCommit(svc.state.store.transact(locks, () => {
    if (!svc.state.method(methodId)) throw notFound();
    // Memberships are decided now, against the groups as they stand when the login commits.
    const groups = matchingOidcGroups(svc.state, methodId, result.idToken ?? claims, result.userinfo ?? {});
    const who = upsertExternalAccount(svc, { id: methodId, method }, key, attributes, undefined, groups);
    if (forConsole) {
      const signedIn = { user_id: who.userId, account_id: who.accountId };
      return {
        writes: [...who.writes, svc.oidcAttempts.signedInWrite(attempt, signedIn, profileOf(claims))],
      };
    }
    const token = mintToken(svc.settings.tokens, { ...who, methodId, scopeId: method.scope_id });
    return {
      writes: [
        ...who.writes,
        { collection: collections.tokens, id: token.id, doc: token.doc, ifVersion: 0 },
        svc.oidcAttempts.readyWrite(attempt, token),
      ],
      events: [tokenIssuedEvent(token, attempt.doc.delivery, ctx.clientIp)],
    };
  }, { sharedLocks: loginParentLocks(methodId, method) }));
}

async function collect(svc: AuthService, ctx: RequestContext, req: AuthRequest): Promise<Response> {
  const tokenId = req.attributes.token_id;
  if (typeof tokenId !== "string" || tokenId === "") {
    throw fieldError({ name: "attributes.token_id", description: "This is a required field." });
  }
  const outcome = await svc.oidcAttempts.collect(tokenId, req.id, "api");
  if (!outcome || outcome.status === "gone" || outcome.status === "signed-in") throw forbidden();
  if (outcome.status === "pending") return json({ command: "token" }, 202);
  if (outcome.status === "failed") throw new ApiError(401, "Unable to authenticate.");
  return deliverToken(
    svc,
    ctx,
    "token",
    req.typeEcho ?? outcome.typeEcho,
    req.delivery === "cookie" || outcome.delivery === "cookie" ? "cookie" : "token",
    outcome.token,
  );
}

/**
 * What a registry sign-in reads of the claims beside the account (docs/identity.md#provisioning): the
 * `preferred_username`, and `email_verified` when it is false (the boolean, or the string some providers send).
 */
function profileOf(
  claims: Record<string, unknown>,
): { preferred_username?: string; email_verified?: "false" } {
  const name = claims.preferred_username;
  const verified = claims.email_verified;
  return {
    ...(typeof name === "string" && name !== "" ? { preferred_username: name.slice(0, 256) } : {}),
    ...(verified === false || verified === "false" ? { email_verified: "false" as const } : {}),
  };
}
