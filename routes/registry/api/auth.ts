// Who is calling an API route: the token sources in their order of precedence, resolved to a caller; the
// permission rules over a caller are core/caller.ts.

import { bearerToken, type RequestContext } from "../../../lib/http.ts";
import { type Acting, ANONYMOUS, type Caller, tokenHash, userCaller } from "../core/caller.ts";
import { type TokenDoc, TOKENS } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";

/** Everything a registry handler needs. */
export interface Req extends Acting {
  ctx: RequestContext;
  reg: Registry;
  /** scheme://host[:port] for the absolute URLs the registry emits. */
  origin: string;
  /**
   * The API the route belongs to: 1 for /api/v1 and the root routes, 2 for /api/v2
   * (docs/registry.md#how-vagrant-23-and-24-see-the-same-box).
   */
  api: 1 | 2;
}

/** The first present token source wins: Bearer, ?access_token, X-Service-Token, X-Atlas-Token. */
export function presentedToken(ctx: RequestContext): string | undefined {
  const bearer = bearerToken(ctx.request);
  if (bearer !== undefined) return bearer;
  // Parsing the URL costs more than this check: most requests carry no query token (a name spelled with
  // percent-escapes still gets parsed).
  const href = ctx.request.url;
  const query = href.indexOf("?");
  if (query >= 0 && (href.includes("access_token", query) || href.includes("%", query))) {
    const value = ctx.url.searchParams.get("access_token");
    if (value !== null) return value;
  }
  // Lowercase names: Deno lowercases the name of every lookup, and a name already lowercase is not copied.
  return ctx.request.headers.get("x-service-token") ?? ctx.request.headers.get("x-atlas-token") ?? undefined;
}

export function resolveCaller(reg: Registry, ctx: RequestContext): Caller {
  const token = presentedToken(ctx);
  if (token === undefined) return ANONYMOUS;
  const hash = tokenHash(reg, token);
  const stored = reg.store.get<TokenDoc>(TOKENS, hash)?.doc;
  const expired = stored?.expires_at ? Date.parse(stored.expires_at) <= Date.now() : false;
  // A service principal's token acts as its organization while the principal exists
  // (docs/registry.md#service-principals-for-ci).
  const principal = stored?.principal;
  const user = !stored || expired
    ? undefined
    : typeof principal === "string"
    ? reg.principals.actingUser(principal)
    : reg.user(stored.username)?.doc;
  if (!user) return { tokenPresent: true, tokenHash: undefined, user: undefined, userKey: undefined };
  reg.tokenUse.set(hash, Date.now());
  // A service principal acts as its organization; a user with the roles their managed groups bind now.
  if (typeof principal === "string") {
    return { tokenPresent: true, tokenHash: hash, user, userKey: user.username.toLowerCase() };
  }
  return userCaller(reg, user, hash);
}
