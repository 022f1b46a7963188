// A provider's signing keys (JWKS): one bounded fetch, or a cached remote key set that refetches on an unknown
// key id (jose's createRemoteJWKSet, its every fetch made through the bounded provider HTTP, one at a time, a
// failure answered again for a while).

import { createRemoteJWKSet, customFetch, type JSONWebKeySet } from "jose";
import { OidcProviderError, type ProviderHttp } from "./provider_http.ts";
import { readProviderJson } from "./provider_json.ts";
import { SharedFetch } from "./shared_fetch.ts";

/** The JWKS at `url`; OidcProviderError when it cannot be had or has no "keys" list. */
export async function fetchJwks(
  http: ProviderHttp,
  url: string,
  init: RequestInit = {},
): Promise<JSONWebKeySet> {
  const what = `jwks_uri ${url}`;
  const body = await readProviderJson(await http.fetch(url, init), what, http.timeoutMs);
  if (!Array.isArray(body.keys)) throw new OidcProviderError(`${what} has no "keys" list`);
  return body as unknown as JSONWebKeySet;
}

/**
 * A key resolver for jose's verify functions: keys cached, refetched on an unknown kid after a cooldown. jose
 * shares one fetch among concurrent verifications; a failed fetch is answered again for `retryMs` before the
 * provider is asked again.
 */
export function remoteJwks(
  http: ProviderHttp,
  url: string,
  retryMs = 0,
): ReturnType<typeof createRemoteJWKSet> {
  // The provider HTTP's own timeout bounds the fetch as jose's would (the same duration).
  const keys = new SharedFetch(() => fetchJwks(http, url), { maxAgeMs: 0, retryMs });
  return createRemoteJWKSet(new URL(url), {
    timeoutDuration: http.timeoutMs,
    // jose reads the Response it is handed without a bound: it gets the checked JWKS, already read.
    [customFetch]: async () => Response.json(await keys.get()),
  });
}
