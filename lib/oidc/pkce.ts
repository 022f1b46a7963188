// PKCE S256: the code challenge an authorization request carries for the login's secret code verifier.

import { base64url } from "../ids.ts";

/** base64url(SHA-256(verifier)), unpadded. */
export async function pkceChallenge(codeVerifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}
