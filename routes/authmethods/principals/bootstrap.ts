// First start: a data directory without the global scope gets, in one commit, the global scope, a password
// method (global primary), account `admin` and its admin user. Its password: WHARF_ADMIN_PASSWORD, else the
// older WHARF_INITIAL_ADMIN_PASSWORD, else generated; a generated one is handed to the registry, which
// announces the one administrator (docs/identity.md#one-administrator).

import { prefixedId, randomBase62 } from "../../../lib/ids.ts";
import { ConfigError } from "../../../lib/errors.ts";
import { collections, nowIso } from "../common.ts";
import { accountWithUser } from "../principals.ts";
import { passwordDefaults } from "../methods/attrs_password.ts";
import type { AuthService } from "../service.ts";
import { type MethodDoc, methodEvent, type ScopeDoc } from "../state.ts";

/** What this start created: the method, and the password when it was generated (to be announced once). */
export interface FirstStart {
  methodId: string;
  generatedPassword: string | undefined;
}

/** The first administrator's password as configured (the first of the variables that is set), or undefined. */
export function configuredAdminPassword(env: Readonly<Record<string, string>>): string | undefined {
  for (const name of ["WHARF_ADMIN_PASSWORD", "WHARF_INITIAL_ADMIN_PASSWORD"]) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    if ([...value].length < 8) throw new ConfigError(`${name} must be at least 8 characters`);
    return value;
  }
  return undefined;
}

export async function bootstrapIfEmpty(svc: AuthService): Promise<FirstStart | undefined> {
  if (svc.state.scope("global")) return undefined;
  const configured = configuredAdminPassword(svc.app.config.env);
  const password = configured ? configured : randomBase62(24);
  const passwordHash = await svc.hasher.hash(password);
  const methodId = prefixedId("ampw");
  // Another node on the same database may have bootstrapped meanwhile: only the one that created it announces.
  const { result: created } = await svc.state.store.transact([`${collections.scopes}/global`], () => {
    if (svc.state.scope("global")) return { result: false };
    const now = nowIso();
    const scope: ScopeDoc = {
      type: "global",
      name: "global",
      description: "Global Scope",
      primary_auth_method_id: methodId,
      created_time: now,
      updated_time: now,
    };
    const method: MethodDoc = {
      scope_id: "global",
      type: "password",
      name: "Generated global scope initial password auth method",
      attributes: { ...passwordDefaults },
      secrets: {},
      hmacs: {},
      created_time: now,
      updated_time: now,
    };
    const created = accountWithUser({
      methodId,
      scopeId: "global",
      type: "password",
      key: "admin",
      attributes: { login_name: "admin" },
      passwordHash,
      admin: true,
      name: "admin",
    });
    return {
      writes: [
        { collection: collections.scopes, id: "global", doc: scope, ifVersion: 0 },
        { collection: collections.methods, id: methodId, doc: method, ifVersion: 0 },
        ...created.writes,
      ],
      events: [
        methodEvent("AuthMethodCreated", methodId, method, 1, { kind: "anonymous" }, { name: method.name }),
      ],
      result: true,
    };
  });
  if (!created) return undefined;
  return { methodId, generatedPassword: configured ? undefined : password };
}

/** The announcement of a generated password when the registry does not announce it with its own admin. */
export function authAdminAnnouncement(methodId: string, password: string): string {
  return `wharf: initial admin created: auth method ${methodId}, login name admin, password ${password} (shown once)`;
}
