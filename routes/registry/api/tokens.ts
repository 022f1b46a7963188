// Tokens (docs/registry.md#getting-a-token): POST/GET/DELETE /api/v1/authenticate and POST
// /api/v1/two-factor/request-code, over services/tokens.ts.

import { json } from "../../../lib/http.ts";
import { requireUser } from "../core/caller.ts";
import { FieldErrors } from "../core/fields.ts";
import { registryLock } from "../core/locks.ts";
import { TOKENS } from "../core/model.ts";
import { issueToken, requestCode as sendCode, verifyLogin } from "../services/tokens.ts";
import type { Req } from "./auth.ts";
import { member, readBodyObject } from "./body.ts";

export function createToken(req: Req): Promise<Response> {
  return req.reg.ctx.logins.count("registry", async () => {
    const body = await readBodyObject(req);
    const errors = new FieldErrors();
    const description = errors.text(member(body, "token"), "description", "Description", 255) ?? "";
    const code = member(body, "two_factor").code;
    const found = await verifyLogin(req.reg, req.ctx, member(body, "user"), code, errors);
    return json(await issueToken(req.reg, found.doc.username, description, found.doc.password_hash));
  });
}

export function validateToken(req: Req): Response {
  const user = requireUser(req);
  return json({ user: { username: user.username } });
}

export async function deleteToken(req: Req): Promise<Response> {
  requireUser(req);
  const hash = req.caller.tokenHash!;
  // The token and its holder's key (an organization's for a service principal's token: its sweep counts them).
  const keys = [registryLock.token(hash), registryLock.namespace(req.caller.userKey!)];
  await req.reg.writeIn(keys, () => ({ writes: [{ collection: TOKENS, id: hash, doc: null }] }));
  req.reg.tokenUse.delete(hash);
  return new Response(null, { status: 204 });
}

export async function requestCode(req: Req): Promise<Response> {
  const body = await readBodyObject(req);
  const method = member(body, "two_factor").delivery_method;
  const destination = await sendCode(req.reg, req.ctx, member(body, "user"), method);
  return json({ two_factor: { obfuscated_destination: destination } });
}
