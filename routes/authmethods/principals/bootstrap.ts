// First start: a data directory without the global scope gets, in one commit, the global scope, a password
// method (global primary), account `admin` and its admin user. A generated password is announced once.

import { prefixedId, randomBase62 } from "../../../lib/ids.ts";
import { ConfigError } from "../../../lib/errors.ts";
import { collections, nowIso } from "../common.ts";
import { accountWithUser } from "../principals.ts";
import { passwordDefaults } from "../methods/attrs_password.ts";
import type { AuthService } from "../service.ts";
import { type MethodDoc, methodEvent, type ScopeDoc } from "../state.ts";

export async function bootstrapIfEmpty(svc: AuthService): Promise<void> {
  if (svc.state.scope("global")) return;
  const configured = svc.app.config.env.WHARF_INITIAL_ADMIN_PASSWORD;
  if (configured !== undefined && configured !== "" && [...configured].length < 8) {
    throw new ConfigError("WHARF_INITIAL_ADMIN_PASSWORD must be at least 8 characters");
  }
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
  if (created && !configured) {
    svc.app.announce(
      `wharf: initial admin created: auth method ${methodId}, login name admin, password ${password} (shown once)`,
    );
  }
}
