// The registry's identity API (docs/identity.md): sign-in methods, the link of a registry user to an
// auth-method user, and managed-group bindings (an organization's roles, the registry's administrators).

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { readBodyObject } from "./body.ts";
import * as signIn from "../services/sign_in_methods.ts";
import * as identities from "../services/identities.ts";
import * as bindings from "../services/group_bindings.ts";

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

export function listGroupBindings(req: Req): Response {
  return json({ group_bindings: bindings.listOrgBindings(req, req.ctx.params.org ?? "") });
}

export async function createGroupBinding(req: Req): Promise<Response> {
  const body = await readBodyObject(req);
  return json({ group_bindings: await bindings.bindOrgGroup(req, req.ctx.params.org ?? "", body) });
}

export async function deleteGroupBinding(req: Req): Promise<Response> {
  const { org, managed_group_id: group } = req.ctx.params;
  return json({ group_bindings: await bindings.unbindOrgGroup(req, org ?? "", group ?? "") });
}

export function getAdminGroups(req: Req): Response {
  return json(bindings.getAdminGroups(req));
}

export async function putAdminGroups(req: Req): Promise<Response> {
  return json(await bindings.putAdminGroups(req, await readBodyObject(req)));
}
