// Admin API of the registry's identity settings (docs/identity.md): the sign-in methods, and the link of a
// registry user to an auth-method user.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { readBodyObject } from "./body.ts";
import * as signIn from "../services/sign_in_methods.ts";
import * as identities from "../services/identities.ts";

export function getSignInMethods(req: Req): Response {
  return json(signIn.getSignInMethods(req));
}

export async function putSignInMethods(req: Req): Promise<Response> {
  return json(await signIn.putSignInMethods(req, await readBodyObject(req)));
}

export function getIdentity(req: Req): Response {
  return json(identities.getIdentity(req, req.ctx.params.username ?? ""));
}

export async function putIdentity(req: Req): Promise<Response> {
  return json(await identities.linkIdentity(req, req.ctx.params.username ?? "", await readBodyObject(req)));
}

export async function deleteIdentity(req: Req): Promise<Response> {
  return json(await identities.unlinkIdentity(req, req.ctx.params.username ?? ""));
}
