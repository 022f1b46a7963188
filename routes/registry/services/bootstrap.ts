// First start without registry users: create `admin`, with WHARF_REGISTRY_ADMIN_PASSWORD or a generated
// password printed once (docs/registry.md#first-start). Nodes starting together on one database create it
// once: only that node announces.

import { randomBase62 } from "../../../lib/ids.ts";
import { now, type UserDoc, USERS } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";

export async function bootstrapAdmin(reg: Registry): Promise<void> {
  if (reg.store.count(USERS) > 0) return;
  const given = reg.settings.adminPassword;
  const password = given ?? randomBase62(24);
  const t = now();
  const doc: UserDoc = {
    username: "admin",
    email: null,
    password_hash: await reg.passwords.hash(password),
    mobile: null,
    admin: true,
    two_factor_enabled: false,
    totp_secret: null,
    totp_pending: null,
    totp_last_step: 0,
    profile: null,
    delinquent: false,
    created_at: t,
    updated_at: t,
  };
  // Re-checked under the registry lock: another node may have bootstrapped meanwhile.
  const created = await reg.write(() =>
    reg.store.count(USERS) > 0
      ? { result: false }
      : { writes: [{ collection: USERS, id: "admin", doc, ifVersion: 0 }], result: true }
  );
  if (!created) return;
  if (!given) {
    reg.ctx.announce(
      `wharf registry: created user "admin" with password ${password} (shown once; change it)`,
    );
  } else {
    reg.ctx.announce(
      'wharf registry: created user "admin" with the password from WHARF_REGISTRY_ADMIN_PASSWORD',
    );
  }
}
