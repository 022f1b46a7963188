// Admin API for users (§5): list, create, read, update, delete (cascade), TOTP enrolment, tokens.

import { json } from "../../../lib/http.ts";
import { type Req } from "./auth.ts";
import { requireAdmin } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors } from "../core/fields.ts";
import { unprocessable } from "../core/errors.ts";
import {
  adminCount,
  deleteNamespaceBoxes,
  existingUserOf,
  renderAdminUser,
  userRemovalWrites,
} from "../services/accounts.ts";
import * as users from "../services/users_admin.ts";
import { confirmTotpFor, enrolTotpFor, removeTotpFor } from "../services/twofactor.ts";
import { deleteTokenOf, tokensOf } from "../services/user_tokens.ts";

function view(req: Req) {
  return { reg: req.reg, origin: req.origin, insider: true };
}

function existingUser(req: Req) {
  return existingUserOf(req.reg, req.ctx.params.name ?? "");
}

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

export function getUser(req: Req): Response {
  requireAdmin(req);
  return json(renderAdminUser(req.reg, existingUser(req).doc));
}

export async function deleteUser(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  existingUser(req);
  const cascade = req.ctx.url.searchParams.get("cascade") === "true";
  const reg = req.reg;
  const doc = await reg.write(() => {
    const current = existingUser(req);
    const problems: string[] = [];
    if (current.doc.admin && adminCount(reg) <= 1) problems.push("The last admin cannot be deleted");
    if (!cascade && reg.boxesOf(current.id).length > 0) {
      problems.push("User owns boxes; delete them first or pass cascade=true");
    }
    if (problems.length) throw unprocessable(problems);
    const boxes = deleteNamespaceBoxes(reg, view(req), current.id, actor.username);
    return {
      writes: [...boxes.writes, ...userRemovalWrites(reg, current.id)],
      events: boxes.events,
      result: current.doc,
    };
  });
  return json(renderAdminUser(reg, doc));
}

export async function enrolTotp(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  return json(await enrolTotpFor(req.reg, existingUser(req).id, { admin: actor.username }));
}

export async function confirmTotp(req: Req): Promise<Response> {
  const body = await readPayload(req, "totp");
  const actor = requireAdmin(req);
  const key = existingUser(req).id;
  const errors = new FieldErrors();
  const code = errors.required(body, "code", "Code", 16);
  errors.throwIfAny();
  const doc = await confirmTotpFor(req.reg, key, code!, actor.username);
  return json(renderAdminUser(req.reg, doc));
}

export async function removeTotp(req: Req): Promise<Response> {
  const actor = requireAdmin(req);
  const doc = await removeTotpFor(req.reg, existingUser(req).id, { admin: actor.username });
  return json(renderAdminUser(req.reg, doc));
}

export function listUserTokens(req: Req): Response {
  requireAdmin(req);
  const tokens = tokensOf(req.reg, existingUser(req).id).map(({ expires_at: _, ...t }) => t);
  return json({ tokens });
}

export async function deleteUserToken(req: Req): Promise<Response> {
  requireAdmin(req);
  await deleteTokenOf(req.reg, existingUser(req).id, req.ctx.params.token_hash ?? "");
  return new Response(null, { status: 204 });
}
