// A provider's signing keys (JWKS): one bounded fetch, or a cached remote key set that refetches on an unknown
// key id (jose's createRemoteJWKSet, its every fetch made through the bounded provider HTTP).

import { createRemoteJWKSet, customFetch, type JSONWebKeySet } from "jose";
import { OidcProviderError, type ProviderHttp } from "./provider_http.ts";
import { readProviderJson } from "./provider_json.ts";

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

/** A key resolver for jose's verify functions: keys cached, refetched on an unknown kid after a cooldown. */
export function remoteJwks(http: ProviderHttp, url: string): ReturnType<typeof createRemoteJWKSet> {
  return createRemoteJWKSet(new URL(url), {
    timeoutDuration: http.timeoutMs,
    // jose reads the Response it is handed without a bound: it gets the checked JWKS, already read.
    [customFetch]: async (u: string, init: RequestInit) =>
      Response.json(await fetchJwks(http, u, { headers: init.headers, signal: init.signal })),
  });
}
