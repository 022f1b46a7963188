// A user's own API tokens: list them (without secrets) and revoke one (the admin API and the user's settings).

import { notFound } from "../core/errors.ts";
import { registryLock } from "../core/locks.ts";
import { type TokenDoc, TOKENS } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { accountOf, type Whose } from "./accounts.ts";

/** A user's tokens (service principals' tokens are not theirs), without secrets. */
export function tokensOf(who: Actor, whose: Whose) {
  const reg = who.reg;
  const { key } = accountOf(who, whose);
  return [...reg.store.list<TokenDoc>(TOKENS)]
    .filter((t) => typeof t.doc.principal !== "string" && t.doc.username.toLowerCase() === key)
    .map((t) => {
      const used = reg.tokenUse.get(t.id);
      return {
        token_hash: t.id,
        description: t.doc.description,
        created_at: t.doc.created_at,
        expires_at: t.doc.expires_at,
        last_used_at: used ? new Date(used).toISOString() : null,
      };
    });
}

/** Revokes one of a user's tokens; 404 when it is not theirs. */
export async function deleteTokenOf(who: Actor, whose: Whose, hash: string): Promise<void> {
  const reg = who.reg;
  const { key } = accountOf(who, whose);
  await reg.writeIn([registryLock.namespace(key), registryLock.token(hash)], () => {
    const token = reg.store.get<TokenDoc>(TOKENS, hash);
    if (!token || token.doc.username.toLowerCase() !== key) throw notFound();
    return { writes: [{ collection: TOKENS, id: hash, doc: null }] };
  });
  reg.tokenUse.delete(hash);
}
