// `wharf registry admin reset-password`: sets the bootstrap admin's password offline, on a data directory (or
// the cluster's database) that no server holds.

import { DataDir } from "../../lib/store/mod.ts";
import { storageSettings } from "../../lib/store/storage_settings.ts";
import { type UserDoc, USERS } from "../../routes/registry/core/model.ts";
import { registryHasher } from "../../routes/registry/core/passwords.ts";
import { HashingQueue } from "../../lib/password_hashing.ts";
import { flag, need, type Parsed, readPassword, UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";

/** Sets the bootstrap admin's password directly in the data directory (the server must be stopped). */
export async function resetPassword(p: Parsed, io: CliIo): Promise<number> {
  const dir = need(flag(p, "data-dir") ?? io.env.WHARF_DATA_DIR, "--data-dir");
  const password = await readPassword(p, io, "New password for admin: ");
  if (password.length < 8) throw new UsageError("the password needs at least 8 characters");
  const passwordHash = await registryHasher(new HashingQueue()).hash(password);
  // On a cluster (WHARF_DATABASE_URL) the admin lives in the shared database, not in the node's directory.
  const data = await DataDir.open(dir, storageSettings(io.env));
  try {
    const admin = data.store.get<UserDoc>(USERS, "admin");
    if (!admin) throw new Error(`no registry user "admin" in ${dir}`);
    const doc: UserDoc = { ...admin.doc, password_hash: passwordHash, updated_at: new Date().toISOString() };
    await data.store.put(USERS, "admin", doc, { ifVersion: admin.version });
  } finally {
    await data.close();
  }
  io.stdout(`password of "admin" reset in ${dir}`);
  return 0;
}
