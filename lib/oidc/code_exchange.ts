// The authorization code redeemed at the provider's token endpoint (PKCE verifier, client authentication):
// the token answer as a JSON object, read bounded.

import type { ProviderHttp } from "./provider_http.ts";
import { readProviderJson } from "./provider_json.ts";

export interface CodeRedemption {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  /** basic: client_secret_basic; post: id and secret in the form; none: only the client id in the form. */
  clientAuth: "basic" | "post" | "none";
}

/** POSTs the code to `tokenEndpoint`; OidcProviderError with the provider's `error` when it refuses. */
export async function redeemCode(
  http: ProviderHttp,
  tokenEndpoint: string,
  r: CodeRedemption,
): Promise<Record<string, unknown>> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: r.code,
    redirect_uri: r.redirectUri,
    code_verifier: r.codeVerifier,
  });
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (r.clientAuth === "basic") {
    // client_secret_basic: both parts form-urlencoded before base64.
    const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
    headers.authorization = `Basic ${btoa(`${enc(r.clientId)}:${enc(r.clientSecret)}`)}`;
  } else {
    form.set("client_id", r.clientId);
    if (r.clientAuth === "post") form.set("client_secret", r.clientSecret);
  }
  const res = await http.fetch(tokenEndpoint, { method: "POST", headers, body: form });
  return await readProviderJson(res, "token endpoint", http.timeoutMs);
}
