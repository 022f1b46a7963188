// The registry's identity API (docs/identity.md): sign-in methods, the link of a registry user to an
// auth-method user, managed-group bindings (an organization's roles, the registry's administrators) and the members they give.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { readBodyObject } from "./body.ts";
import * as signIn from "../services/sign_in_methods.ts";
import * as identities from "../services/identities.ts";
import * as bindings from "../services/group_bindings.ts";
import { listOrgMembers } from "../services/org_members.ts";

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

/** The organization's members with their sources (docs/identity.md#who-is-a-member), `?page=&limit=`. */
export function listMembers(req: Req): Response {
  const params = req.ctx.url.searchParams;
  const input = { page: params.get("page"), limit: params.get("limit") };
  return json(listOrgMembers(req, req.ctx.params.org ?? "", input));
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
