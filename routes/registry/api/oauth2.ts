// POST /oauth2/token (docs/registry.md#service-principals-for-ci): the client-credentials grant that
// HCP-style pipelines (vagrant_cloud gem 3.1 with HCP_CLIENT_ID/HCP_CLIENT_SECRET) use, answered and failed
// in RFC 6749 §5.1/§5.2 JSON; the credentials' check and the token are services/principal_tokens.ts.

import { ApiError } from "../../../lib/errors.ts";
import { type Handler, readBody, type RequestContext } from "../../../lib/http.ts";
import { httpErrorOf } from "../../../lib/store_http.ts";
import { type Req } from "./auth.ts";
import { ClientAuthFailed, principalToken } from "../services/principal_tokens.ts";

export const OAUTH_TOKEN_PATH = "/oauth2/token";
/** Form bodies are a few hundred bytes: anything past this is refused before it is read. */
const BODY_LIMIT = 16 * 1024;
const BASIC_CHALLENGE = 'Basic realm="wharf", charset="UTF-8"';

type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "unsupported_grant_type"
  | "temporarily_unavailable";

/** A failure of the token endpoint, rendered as RFC 6749 §5.2 JSON. */
class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: OAuthErrorCode,
    description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/** Token answers and their errors must not be cached (RFC 6749 §5.1). */
const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" };

function oauthJson(body: unknown, status: number, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("Content-Type", "application/json");
  for (const [k, v] of Object.entries(noStore)) h.set(k, v);
  return new Response(JSON.stringify(body), { status, headers: h });
}

/**
 * Any registry failure (maintenance 503, rate limit 429, body 413…) in the token endpoint's shape, with the
 * request id every registry answer carries (the guard has set it on its own errors).
 */
function renderFailure(thrown: unknown, requestId: string): Response {
  const err = httpErrorOf(thrown);
  let response: Response;
  if (err instanceof OAuthError) {
    response = oauthJson({ error: err.code, error_description: err.message }, err.status, err.headers);
  } else if (err instanceof ApiError && (err.status < 500 || err.status === 503)) {
    const code = err.status === 429 || err.status === 503 ? "temporarily_unavailable" : "invalid_request";
    response = oauthJson({ error: code, error_description: err.message }, err.status, err.headers);
  } else throw err;
  if (!response.headers.has("X-Request-Id")) response.headers.set("X-Request-Id", requestId);
  return response;
}

/** Wraps the registry's guard around the token route so that every failure, its own too, is RFC 6749 JSON. */
export function withOAuthErrors(handler: Handler): Handler {
  return (ctx: RequestContext) => {
    try {
      const answer = handler(ctx);
      return answer instanceof Promise ? answer.catch((err) => renderFailure(err, ctx.requestId)) : answer;
    } catch (err) {
      return renderFailure(err, ctx.requestId);
    }
  };
}

const invalidRequest = (description: string) => new OAuthError(400, "invalid_request", description);

/** The parameters, each at most once (RFC 6749 §3.2), of a UTF-8 `application/x-www-form-urlencoded` body. */
async function readForm(ctx: RequestContext): Promise<Map<string, string>> {
  const type = ctx.request.headers.get("content-type");
  const bytes = await readBody(ctx.request, BODY_LIMIT);
  const mediaType = (type ?? "").split(";")[0]!.trim().toLowerCase();
  if (bytes.length > 0 && mediaType !== "application/x-www-form-urlencoded") {
    throw invalidRequest("The body must be application/x-www-form-urlencoded");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest("The body is not valid UTF-8");
  }
  const form = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (form.has(key)) throw invalidRequest(`Parameter ${key} is repeated`);
    form.set(key, value);
  }
  return form;
}

interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Sent as HTTP Basic: a failure then answers with a WWW-Authenticate challenge (RFC 6749 §5.2). */
  basic: boolean;
}

/** Decodes half a Basic credential: form-encoded before base64 (RFC 6749 §2.3.1), else taken as it is. */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replaceAll("+", " "));
  } catch {
    return part;
  }
}

function clientCredentials(ctx: RequestContext, form: Map<string, string>): ClientCredentials {
  const auth = ctx.request.headers.get("authorization");
  const challenge = { "WWW-Authenticate": BASIC_CHALLENGE };
  if (auth !== null) {
    const m = /^\s*basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(auth);
    if (!m) {
      throw new OAuthError(
        401,
        "invalid_client",
        "Only HTTP Basic client authentication is supported",
        challenge,
      );
    }
    let decoded: string;
    try {
      decoded = new TextDecoder("utf-8", { fatal: true }).decode(
        Uint8Array.from(atob(m[1]!.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0)),
      );
    } catch {
      throw new OAuthError(
        401,
        "invalid_client",
        "The Basic credentials are not valid base64 UTF-8",
        challenge,
      );
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError(401, "invalid_client", "The Basic credentials lack a ':'", challenge);
    const clientId = formDecode(decoded.slice(0, colon));
    if (form.has("client_secret")) {
      throw invalidRequest("Send the client credentials either as HTTP Basic or in the body, not both");
    }
    if (form.has("client_id") && form.get("client_id") !== clientId) {
      throw invalidRequest("client_id in the body differs from the HTTP Basic one");
    }
    return { clientId, clientSecret: formDecode(decoded.slice(colon + 1)), basic: true };
  }
  const clientId = form.get("client_id");
  if (!clientId) {
    throw new OAuthError(401, "invalid_client", "Client authentication is missing", challenge);
  }
  const clientSecret = form.get("client_secret");
  if (!clientSecret) throw new OAuthError(401, "invalid_client", "Client authentication failed");
  return { clientId, clientSecret, basic: false };
}

/** POST /oauth2/token: grant_type=client_credentials with the principal's id and secret → a Bearer token. */
export async function oauthToken(req: Req): Promise<Response> {
  const { ctx } = req;
  if (ctx.request.method !== "POST") {
    throw new OAuthError(405, "invalid_request", "The token endpoint takes POST only", { Allow: "POST" });
  }
  const query = ctx.url.searchParams;
  if (query.has("client_secret") || query.has("client_id")) {
    throw invalidRequest("Client credentials must not be sent in the URL");
  }
  const form = await readForm(ctx);
  const grant = form.get("grant_type");
  if (!grant) throw invalidRequest("grant_type is missing");
  if (grant !== "client_credentials") {
    throw new OAuthError(400, "unsupported_grant_type", "Only grant_type=client_credentials is supported");
  }
  const credentials = clientCredentials(ctx, form);
  let issued;
  try {
    issued = await principalToken(req, { ...credentials, clientIp: ctx.clientIp });
  } catch (err) {
    if (!(err instanceof ClientAuthFailed)) throw err;
    throw new OAuthError(
      401,
      "invalid_client",
      err.message,
      credentials.basic ? { "WWW-Authenticate": BASIC_CHALLENGE } : {},
    );
  }
  const body = { access_token: issued.token, token_type: "Bearer", expires_in: issued.expiresInSeconds };
  return oauthJson(body, 200);
}
