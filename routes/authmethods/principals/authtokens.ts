// /v1/auth-tokens/{id}: read and delete (logout) by the token's owner or an admin.

import { json, type RequestContext } from "../../../lib/http.ts";
import { assertIdFormat, collections, lockKeys, parentLocks } from "../common.ts";
import { forbidden, notFound, unauthenticated } from "../errors.ts";
import type { AuthService } from "../service.ts";
import { tokenDeletedEvent, type TokenDoc } from "../state.ts";
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
      writes: [{ collection: collections.tokens, id, doc: null }],
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
