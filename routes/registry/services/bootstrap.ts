// First start without registry users (docs/identity.md#one-administrator): one administrator. With the auth
// methods beside the registry, registry user `admin` is linked to their first admin (account `admin` of the
// global primary password method), signs in through that method (sign-in methods ["registry", it]) and has no
// registry password of its own unless WHARF_REGISTRY_ADMIN_PASSWORD gives one; one password is printed when
// generated. Without them, `admin` gets WHARF_REGISTRY_ADMIN_PASSWORD or a generated password, as before.
// Nodes starting together on one database create it once: only that node announces.

import { randomBase62 } from "../../../lib/ids.ts";
import { now, plainUserDoc, SETTINGS, USERS } from "../core/model.ts";
import type { Registry } from "../core/registry.ts";
import { REGISTRY_METHOD, SIGN_IN_METHODS_ID } from "./sign_in_methods.ts";

export async function bootstrapAdmin(reg: Registry): Promise<void> {
  const firstStart = reg.identity?.takeFirstStart();
  const created = reg.store.count(USERS) > 0
    ? undefined
    : await createAdmin(reg, firstStart?.generatedPassword);
  if (!created) {
    // The registry had its admin already: the auth methods' new admin is announced as their own.
    if (firstStart?.announcement) reg.ctx.announce(firstStart.announcement);
    return;
  }
  if (created.linkedTo) {
    // Not generated on this node: configured, or another node made the auth methods' admin and announces it.
    if (!created.generated) return;
    reg.ctx.announce(
      `wharf: initial admin created: auth method ${created.linkedTo}, login name admin, password ${created.generated} ` +
        `(shown once; change it); registry user "admin" (administrator) signs in with the same name and password`,
    );
  } else if (created.generated) {
    reg.ctx.announce(
      `wharf registry: created user "admin" with password ${created.generated} (shown once; change it)`,
    );
  } else {
    reg.ctx.announce(
      'wharf registry: created user "admin" with the password from WHARF_REGISTRY_ADMIN_PASSWORD',
    );
  }
}

async function createAdmin(
  reg: Registry,
  authPassword: string | undefined,
): Promise<{ linkedTo: string | undefined; generated: string | undefined } | undefined> {
  const given = reg.settings.adminPassword;
  const person = reg.identity?.initialAdmin();
  // Linked: the auth methods' password is the one password (a registry one only when the old variable is set).
  const ownPassword = given ?? (person ? undefined : randomBase62(24));
  const generated = person ? authPassword : given ? undefined : ownPassword;
  const doc = plainUserDoc({
    username: "admin",
    email: null,
    password_hash: ownPassword === undefined ? "" : await reg.passwords.hash(ownPassword),
    admin: true,
    ...(person ? { identity: { user_id: person.userId } } : {}),
  }, now());
  const signIn = person
    ? [{ collection: SETTINGS, id: SIGN_IN_METHODS_ID, doc: { methods: [REGISTRY_METHOD, person.methodId] } }]
    : [];
  // Re-checked under the registry lock: another node may have bootstrapped meanwhile.
  const created = await reg.write(() =>
    reg.store.count(USERS) > 0
      ? { result: false }
      : { writes: [{ collection: USERS, id: "admin", doc, ifVersion: 0 }, ...signIn], result: true }
  );
  return created ? { linkedTo: person?.methodId, generated } : undefined;
}
