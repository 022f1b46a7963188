// A service principal's token (docs/registry.md#service-principals-for-ci): its client id and secret, checked
// under the login throttle, exchanged for a short-lived token acting as its organization (the principal's
// expired tokens are swept as it gets a new one).

import { randomSecret } from "../../../lib/ids.ts";
import { tokenHash } from "../core/caller.ts";
import { registryLock } from "../core/locks.ts";
import { now, TOKENS } from "../core/model.ts";
import type { PrincipalDoc, PrincipalTokenDoc } from "../core/principals.ts";
import type { Actor } from "../core/registry.ts";

const MAX_CLIENT_ID = 128;
const MAX_CLIENT_SECRET = 512;

/** The client id and secret do not name a principal (or it was deleted meanwhile). */
export class ClientAuthFailed extends Error {
  constructor() {
    super("Client authentication failed");
  }
}

/** A principal's credentials as sent, and the address they came from (the throttle's second key). */
export interface ClientCredentialsInput {
  clientId: string;
  clientSecret: string;
  clientIp: string;
}

export interface PrincipalToken {
  token: string;
  expiresInSeconds: number;
}

/**
 * The throttle key of a client id. Password logins use their login lowercased, so a key with an uppercase
 * letter can never be one of theirs; the IP's count is shared with password logins on purpose.
 */
function throttleKey(clientId: string): string {
  return `Principal ${clientId.slice(0, MAX_CLIENT_ID)}`;
}

/** A new token for the principal the credentials name: ClientAuthFailed otherwise, 429 past the throttle. */
export async function principalToken(who: Actor, input: ClientCredentialsInput): Promise<PrincipalToken> {
  const reg = who.reg;
  let principal: PrincipalDoc | undefined;
  const verified = () => {
    const { clientId, clientSecret } = input;
    principal = clientId.length <= MAX_CLIENT_ID && clientSecret.length <= MAX_CLIENT_SECRET
      ? reg.principals.verify(clientId, clientSecret)
      : undefined;
    return Promise.resolve(principal !== undefined);
  };
  if (!(await reg.loginThrottle.check(throttleKey(input.clientId), input.clientIp, verified))) {
    throw new ClientAuthFailed();
  }
  return await mintToken(who, principal!);
}

async function mintToken(who: Actor, principal: PrincipalDoc): Promise<PrincipalToken> {
  const reg = who.reg;
  const token = `wharf_${randomSecret(32)}`;
  const hash = tokenHash(reg, token);
  const ttl = reg.settings.spTokenTtlMs;
  // The principal's organization's key (a principal never moves): its tokens are swept and capped here.
  await reg.writeIn([registryLock.namespace(principal.org)], () => {
    // A principal deleted while its secret was checked gets nothing.
    const current = reg.principals.get(principal.client_id)?.doc;
    const org = current ? reg.org(current.org)?.doc : undefined;
    if (!current || !org) throw new ClientAuthFailed();
    const doc: PrincipalTokenDoc = {
      token_hash: hash,
      username: org.name,
      description: `service principal ${current.name}`,
      created_at: now(),
      expires_at: new Date(Date.now() + ttl).toISOString(),
      principal: current.client_id,
    };
    // Its expired tokens (and the oldest past the cap) are removed as it gets a new one.
    const sweep = reg.principals.tokenRemovals(current.client_id, { expiredOnly: true });
    return { writes: [...sweep, { collection: TOKENS, id: hash, doc, ifVersion: 0 }], result: sweep };
  }).then((sweep) => reg.principals.forget(sweep));
  reg.principals.lastUsed.set(principal.client_id, Date.now());
  return { token, expiresInSeconds: Math.floor(ttl / 1000) };
}
