// POST /v1/auth-methods/{id}:authenticate, the dispatcher: parses the body every type shares and hands the
// request to the type's login (password_login.ts, ldap_login.ts, authenticate_oidc.ts). Nothing imports this
// file but mod.ts; what the logins share lives in login_request.ts, login_failures.ts, external_accounts.ts
// and token_delivery.ts.

import type { RequestContext } from "../../../lib/http.ts";
import { asAttrs } from "../methods/attrs_common.ts";
import { assertIdFormat, isObject } from "../common.ts";
import { failedPrecondition, fieldError, notFound } from "../errors.ts";
import { methodIdPrefixes } from "../methods/methods.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import { oidcCommand } from "./authenticate_oidc.ts";
import { ldapLogin } from "./ldap_login.ts";
import type { AuthRequest } from "./login_request.ts";
import { recordFailure } from "./login_failures.ts";
import { passwordLogin } from "./password_login.ts";

/** Bounds on login input: the throttle keeps names in memory and argon2 hashes the whole password. */
const maxLoginNameLength = 512;
const maxPasswordLength = 4096;

function parseDelivery(
  body: Record<string, unknown>,
): { delivery: "token" | "cookie"; echo: string | undefined } {
  const read = (key: "type" | "token_type"): string | undefined => {
    const v = body[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string" || !["token", "cookie"].includes(v.toLowerCase())) {
      throw fieldError({ name: key, description: 'Must be "token" or "cookie".' });
    }
    return v;
  };
  const type = read("type");
  const tokenType = read("token_type");
  if (type && tokenType && type.toLowerCase() !== tokenType.toLowerCase()) {
    throw fieldError({ name: "token_type", description: 'Conflicts with "type"; send only "type".' });
  }
  const chosen = type ?? tokenType;
  return { delivery: (chosen?.toLowerCase() ?? "token") as "token" | "cookie", echo: type };
}

export async function authenticate(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  assertIdFormat(id, methodIdPrefixes);
  const body = await readObjectBody(ctx);
  const { delivery, echo } = parseDelivery(body);
  if (body.command !== undefined && body.command !== null && typeof body.command !== "string") {
    throw fieldError({ name: "command", description: "Invalid command for this auth method type." });
  }
  if (body.attributes !== undefined && body.attributes !== null && !isObject(body.attributes)) {
    throw fieldError({ name: "attributes", description: "Expected an object." });
  }
  const stored = svc.state.method(id);
  if (!stored) throw notFound();
  const req: AuthRequest = {
    id,
    method: stored.doc,
    command: (body.command as string | undefined) || undefined,
    delivery,
    typeEcho: echo,
    attributes: asAttrs(body.attributes) ?? {},
  };
  if (stored.doc.type === "oidc") return await oidcCommand(svc, ctx, req);
  if (req.command !== undefined && req.command !== "login") {
    throw fieldError({ name: "command", description: "Invalid command for this auth method type." });
  }
  if (stored.doc.type === "ldap" && stored.doc.attributes.state === "inactive") {
    const name = typeof req.attributes.login_name === "string" ? req.attributes.login_name.slice(0, 512) : "";
    await recordFailure(svc, ctx, id, name, "inactive");
    throw failedPrecondition("Cannot authenticate against an inactive LDAP auth method");
  }
  const loginName = req.attributes.login_name;
  const password = req.attributes.password;
  const missing = [];
  if (typeof loginName !== "string" || loginName === "") {
    missing.push({ name: "attributes.login_name", description: "This is a required field." });
  }
  if (typeof password !== "string" || password === "") {
    missing.push({ name: "attributes.password", description: "This is a required field." });
  }
  if (typeof loginName === "string" && loginName.length > maxLoginNameLength) {
    missing.push({ name: "attributes.login_name", description: `At most ${maxLoginNameLength} characters.` });
  }
  if (typeof password === "string" && password.length > maxPasswordLength) {
    missing.push({ name: "attributes.password", description: `At most ${maxPasswordLength} characters.` });
  }
  if (missing.length) throw fieldError(missing);
  const type = stored.doc.type === "password" ? "password" : "ldap";
  return await svc.app.logins.count(
    type,
    () =>
      type === "password"
        ? passwordLogin(svc, ctx, req, loginName as string, password as string)
        : ldapLogin(svc, ctx, req, loginName as string, password as string),
  );
}
