// Reads a provider's JSON answer (discovery, JWKS, token, userinfo) holding at most maxProviderAnswerBytes: the
// body is read chunk by chunk and cancelled past the cap, so an endless or huge answer costs no more than that.

import { readChunkedBody } from "../http.ts";
import { describeProviderFailure, OidcProviderError } from "./provider_http.ts";

/** Largest answer read from a provider (docs/security.md#openid-providers). */
const maxProviderAnswerBytes = 256 * 1024;

/** The body as text, or OidcProviderError once it passes `maxBytes` (the rest is never read). */
async function readBoundedText(
  res: Response,
  what: string,
  timeoutMs: number,
  maxBytes = maxProviderAnswerBytes,
): Promise<string> {
  if (!res.body) return "";
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await res.body.cancel().catch(() => {});
    throw new OidcProviderError(`${what} answered more than ${maxBytes} bytes`);
  }
  // lib/http.ts's reader: a BYOB read into one growing buffer, so a provider trickling tiny chunks holds no
  // per-chunk buffers, and the body is cancelled once it passes the cap.
  const tooLarge = () => new OidcProviderError(`${what} answered more than ${maxBytes} bytes`);
  try {
    return new TextDecoder().decode(await readChunkedBody(res.body, maxBytes, tooLarge));
  } catch (err) {
    await res.body.cancel().catch(() => {});
    if (err instanceof OidcProviderError) throw err;
    throw new OidcProviderError(
      `${what}: reading the answer failed: ${describeProviderFailure(err, timeoutMs)}`,
    );
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === "object" && body !== null && !Array.isArray(body)
      ? body as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer as a JSON object when the provider said 200; otherwise OidcProviderError naming the status (a
 * redirect is named as one: it is never followed) and the OAuth `error` (`error_description`) it gave.
 */
export async function readProviderJson(
  res: Response,
  what: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {});
    throw new OidcProviderError(`${what} answered a redirect (HTTP ${res.status}), which is not followed`);
  }
  const body = parseObject(await readBoundedText(res, what, timeoutMs));
  if (res.status !== 200) {
    let detail = "";
    if (typeof body?.error === "string") {
      detail = `: ${body.error}${
        typeof body.error_description === "string" ? ` (${body.error_description})` : ""
      }`;
    }
    throw new OidcProviderError(`${what} returned HTTP ${res.status}${detail}`);
  }
  if (!body) throw new OidcProviderError(`${what} is not a JSON object`);
  return body;
}
