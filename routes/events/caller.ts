// Who is calling the Nomad-shaped family: the secret from X-Nomad-Token or Authorization: Bearer.

/**
 * The request's token secret: `X-Nomad-Token` (trimmed, non-empty) wins; else the first word after a
 * case-insensitive `Bearer` scheme. Other schemes and query parameters are no token.
 */
export function requestSecret(request: Request): string | undefined {
  const header = request.headers.get("X-Nomad-Token")?.trim();
  if (header) return header;
  const auth = request.headers.get("Authorization");
  const m = auth ? /^\s*bearer\s+(\S+)/i.exec(auth) : null;
  return m?.[1];
}
