// The password login behind POST /v1/auth-methods/{id}:authenticate: throttled per login name, the hash
// upgraded in the login's commit when its parameters are outdated.

import type { DocWrite } from "../../../lib/store/mod.ts";
import { collections } from "../common.ts";
import type { AccountDoc } from "../state.ts";
import type { LoginAttempt } from "../throttle.ts";
import type { AuthService } from "../service.ts";
import { identityLock } from "./external_accounts.ts";
import { type CredentialCheck, type CredentialLogin, unableToAuthenticate } from "./login_request.ts";
import { credentialLogin } from "./token_delivery.ts";

export const passwordLogin: CredentialLogin = (svc, ctx, req, loginName, password) =>
  credentialLogin(
    svc,
    ctx,
    req,
    loginName,
    loginName,
    (attempt) => checkPassword(svc, req.id, loginName, password, attempt),
  );

/**
 * A password login's check (under `attempt`) and, when it passed, the locks and the in-commit resolution of
 * its account (with the rehash): what the :authenticate login and the registry's sign-in share.
 */
export async function checkPassword(
  svc: AuthService,
  methodId: string,
  loginName: string,
  password: string,
  attempt: LoginAttempt,
): Promise<CredentialCheck> {
  const account = svc.state.accountByKey(methodId, loginName);
  const ok = await attempt.check(() => svc.hasher.verify(account?.doc.password_hash, password));
  if (!ok || !account) return { ok: false, reason: "invalid_credentials" };
  const verifiedHash = account.doc.password_hash;
  const rehashed = verifiedHash && svc.hasher.needsRehash(verifiedHash)
    ? await svc.hasher.hash(password)
    : undefined;
  // The account's own lock orders this login with set-/change-password and deletes of the account.
  const locks = [identityLock(methodId, loginName), `${collections.accounts}/${account.id}`];
  return {
    ok: true,
    locks,
    resolve: () => {
      // The account may have been deleted, or its password replaced (revoking every token), while the
      // password was being checked: a token minted now would outlive that revocation.
      const cur = svc.state.get<AccountDoc>(collections.accounts, account.id);
      if (!cur || cur.doc.password_hash !== verifiedHash) throw unableToAuthenticate();
      const writes: DocWrite[] = rehashed
        ? [{
          collection: collections.accounts,
          id: cur.id,
          doc: { ...cur.doc, password_hash: rehashed },
          ifVersion: cur.version,
        }]
        : [];
      return { userId: cur.doc.user_id, accountId: cur.id, writes };
    },
  };
}
