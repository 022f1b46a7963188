// /v1/auth-tokens: list (an admin sees every token of the scope, a user their own), and read and delete
// (logout) of one by the token's owner or an admin.

import { json, type RequestContext } from "../../../lib/http.ts";
import { filterIter } from "../lists/list_route.ts";
import { listResponse, parseFilterParam, runList } from "../lists/listing.ts";
import { listedScopes } from "../methods/methods.ts";
import { assertIdFormat, collections, lockKeys, nowIso, parentLocks } from "../common.ts";
import { forbidden, notFound, unauthenticated } from "../errors.ts";
import { type AuthService, listEnvironment } from "../service.ts";
import { tokenDeletedEvent, type TokenDoc, type TombstoneDoc } from "../state.ts";
import { cookiesSecure, httpCookie, jsCookie, renderToken } from "../tokens.ts";

function loadToken(svc: AuthService, ctx: RequestContext) {
  const id = ctx.params.id!;
  assertIdFormat(id, ["at"]);
  const caller = svc.caller(ctx);
  if (caller.kind !== "user") throw unauthenticated();
  const stored = svc.state.get<TokenDoc>(collections.tokens, id);
  if (!caller.admin && stored?.doc.user_id !== caller.userId) throw forbidden();
  if (!stored) throw notFound();
  return { id, caller, stored };
}

export function readAuthToken(svc: AuthService, ctx: RequestContext): Response {
  const { id, stored } = loadToken(svc, ctx);
  return json(renderToken(svc.state, id, stored.doc));
}

export async function deleteAuthToken(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored } = loadToken(svc, ctx);
  await svc.state.store.transact([lockKeys.token(id)], () => {
    const cur = svc.state.get<TokenDoc>(collections.tokens, id);
    if (!cur) throw notFound();
    const reason = caller.kind === "user" && caller.tokenId === id ? "logout" : "admin";
    return {
      writes: [
        { collection: collections.tokens, id, doc: null },
        svc.state.tokenTombstone(id, cur.doc, nowIso()),
      ],
      events: [tokenDeletedEvent(id, cur.doc, reason)],
    };
  }, { sharedLocks: parentLocks([stored.doc]) });
  const headers = new Headers();
  const cookies = ctx.request.headers.get("Cookie") ?? "";
  if (cookies.includes(jsCookie) || cookies.includes(httpCookie)) {
    const flags = `Path=/; SameSite=Strict${cookiesSecure(ctx.url) ? "; Secure" : ""}; Max-Age=0`;
    headers.append("Set-Cookie", `${jsCookie}=; ${flags}`);
    headers.append("Set-Cookie", `${httpCookie}=; HttpOnly; ${flags}`);
  }
  return json({}, 200, headers);
}

/**
 * GET /v1/auth-tokens?scope_id=…[&recursive=true]: the tokens issued by the scope's methods (every org's too
 * when recursive from global), newest first, with filter, list tokens and refresh as the other lists.
 */
export function listAuthTokens(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.requireUser(ctx);
  const url = ctx.url;
  const { scopes } = listedScopes(svc, url);
  const visible = (userId: string) => caller.admin || userId === caller.userId;
  const body = runList<TokenDoc>({
    resource: "auth-token",
    candidates: filterIter(svc.state.list<TokenDoc>(collections.tokens), (t) => scopes.has(t.doc.scope_id)),
    tombstones: filterIter(
      svc.state.list<TombstoneDoc>(collections.tombstones),
      (t) => t.doc.resource === "auth-token" && scopes.has(t.doc.scope_id) && visible(t.doc.parent_id ?? ""),
    ),
    render: (t) => (visible(t.doc.user_id) ? renderToken(svc.state, t.id, t.doc) : undefined),
    caller,
    queryKey: JSON.stringify([[...scopes].sort(), url.searchParams.get("filter") ?? ""]),
    ...listEnvironment(svc, url),
    // Tokens are not among the listed collections the family's generation counts.
    generation: svc.state.tokenListGeneration,
  }, parseFilterParam(url));
  return listResponse(body);
}
