// Admin API for users (docs/registry.md#users-and-organizations-admin-api): list, create, read, update,
// delete (cascade), TOTP enrolment, tokens.

import { json } from "../../../lib/http.ts";
import { type Req } from "./auth.ts";
import { readPayload } from "./body.ts";
import { FieldErrors } from "../core/fields.ts";
import { accountOf, deleteNamespace, renderAdminUser } from "../services/accounts.ts";
import * as users from "../services/users_admin.ts";
import {
  confirmTotp as confirmTotpOf,
  enrolTotp as enrolTotpOf,
  removeTotp as removeTotpOf,
} from "../services/twofactor.ts";
import { deleteTokenOf, tokensOf } from "../services/user_tokens.ts";

export function listUsers(req: Req): Response {
  return json({ users: users.listUsers(req).map((u) => renderAdminUser(req.reg, u)) });
}

export async function createUser(req: Req): Promise<Response> {
  const body = await readPayload(req, "user");
  return json(renderAdminUser(req.reg, await users.createUser(req, body)));
}

export async function updateUser(req: Req): Promise<Response> {
  const body = await readPayload(req, "user");
  return json(renderAdminUser(req.reg, await users.updateUser(req, req.ctx.params.name ?? "", body)));
}

/** The user the path names, for an administrator (404 when absent). */
function reqUser(req: Req) {
  return req.reg.user(accountOf(req, named(req)).key)!.doc;
}

export function getUser(req: Req): Response {
  return json(renderAdminUser(req.reg, reqUser(req)));
}

export async function deleteUser(req: Req): Promise<Response> {
  const cascade = req.ctx.url.searchParams.get("cascade") === "true";
  return json(
    renderAdminUser(
      req.reg,
      await deleteNamespace(req, users.userRemoval(req.reg, req.ctx.params.name ?? ""), cascade),
    ),
  );
}

/** The user the path names, by an administrator. */
function named(req: Req) {
  return { user: req.ctx.params.name ?? "" };
}

export async function enrolTotp(req: Req): Promise<Response> {
  return json(await enrolTotpOf(req, named(req)));
}

export async function confirmTotp(req: Req): Promise<Response> {
  const body = await readPayload(req, "totp");
  accountOf(req, named(req));
  const errors = new FieldErrors();
  const code = errors.required(body, "code", "Code", 16);
  errors.throwIfAny();
  return json(renderAdminUser(req.reg, await confirmTotpOf(req, named(req), code!)));
}

export async function removeTotp(req: Req): Promise<Response> {
  return json(renderAdminUser(req.reg, await removeTotpOf(req, named(req))));
}

export function listUserTokens(req: Req): Response {
  const tokens = tokensOf(req, named(req)).map(({ expires_at: _, ...t }) => t);
  return json({ tokens });
}

export async function deleteUserToken(req: Req): Promise<Response> {
  await deleteTokenOf(req, named(req), req.ctx.params.token_hash ?? "");
  return new Response(null, { status: 204 });
}
