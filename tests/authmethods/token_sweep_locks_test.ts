// Token sweeps (expired tokens, uncollected OIDC tokens) take the locks other token deleters take, so a logout
// or a method delete committing at the same moment never gives a token two AuthTokenDeleted events.

import type { DataDir } from "../../lib/store/mod.ts";
import { collections, lockKeys, parentLocks } from "../../routes/authmethods/common.ts";
import { type AttemptDoc, attemptsCollection } from "../../routes/authmethods/oidc_attempts.ts";
import { AuthService, type OidcProtocol } from "../../routes/authmethods/service.ts";
import { tokenDeletedEvent, type TokenDoc } from "../../routes/authmethods/state.ts";
import { mintToken, type NewToken } from "../../routes/authmethods/tokens.ts";
import { withAppContext } from "../helpers/app_context.ts";
import { assertEquals } from "../helpers/assert.ts";
import { fastEnv } from "./helpers.ts";

const noOidc: OidcProtocol = {
  validateDiscoveredConfig: () => Promise.resolve([]),
  buildAuthUrl: () => Promise.reject(new Error("not used")),
  exchangeCode: () => Promise.reject(new Error("not used")),
};

function withService(fn: (svc: AuthService, data: DataDir) => Promise<void>): Promise<void> {
  return withAppContext(fastEnv, async (app) => {
    const svc = new AuthService(app, noOidc);
    try {
      await fn(svc, app.data);
    } finally {
      svc.close();
    }
  });
}

/** A committed token of a (notional) OIDC method; `ttlMs` < 0 makes it already expired. */
async function commitToken(svc: AuthService, ttlMs: number): Promise<NewToken> {
  const token = mintToken({ ttlMs, staleMs: 86_400_000 }, {
    userId: "u_sweeptest1",
    accountId: "acctoidc_sweeptest1",
    methodId: "amoidc_sweeptest1",
    scopeId: "global",
  });
  await svc.state.store.put(collections.tokens, token.id, token.doc);
  return token;
}

/**
 * Starts a commit that deletes `token` as another writer would (`locks` exclusive, `shared` shared), having read
 * the token before its commit: it holds its locks until `go()` is called.
 */
function heldDelete(svc: AuthService, token: NewToken, locks: string[], shared: string[] = []) {
  let go!: () => void;
  const gate = new Promise<void>((r) => (go = r));
  const store = svc.state.store;
  const done = store.transact(locks, async () => {
    const cur = store.get<TokenDoc>(collections.tokens, token.id);
    await gate;
    if (!cur) return {};
    return {
      writes: [{ collection: collections.tokens, id: token.id, doc: null }],
      events: [tokenDeletedEvent(token.id, cur.doc, "other_writer")],
    };
  }, { sharedLocks: shared });
  return { go, done };
}

async function deletedEvents(data: DataDir, tokenId: string): Promise<number> {
  let n = 0;
  for await (const { line } of data.log.read(1)) {
    const batch = JSON.parse(line) as { Events: Array<{ Type: string; Key: string }> };
    n += batch.Events.filter((e) => e.Type === "AuthTokenDeleted" && e.Key === tokenId).length;
  }
  return n;
}

/** An expired OIDC attempt whose minted `token` was never collected (its sealed secret is not read). */
async function addUncollectedAttempt(svc: AuthService, token: NewToken): Promise<void> {
  const doc: AttemptDoc = {
    auth_method_id: token.doc.auth_method_id,
    status: "ready",
    created_time: new Date(Date.now() - 2000).toISOString(),
    expiration_time: new Date(Date.now() - 1).toISOString(),
    delivery: "token",
    secrets: "sealed",
    token_id: token.id,
    token: "sealed",
  };
  await svc.state.store.put(attemptsCollection, "h", doc);
}

/**
 * Holds a delete of `token` (by a writer taking `locks`, and `shared` shared) open while `sweep` starts, lets it
 * commit, then expects exactly one deletion event and no token.
 */
async function raceSweep(
  svc: AuthService,
  data: DataDir,
  token: NewToken,
  writer: { locks: string[]; shared?: string[] },
  sweep: () => Promise<unknown>,
): Promise<void> {
  const other = heldDelete(svc, token, writer.locks, writer.shared);
  const swept = sweep();
  await new Promise((r) => setTimeout(r, 50));
  other.go();
  await Promise.all([other.done, swept]);
  assertEquals(svc.state.store.get(collections.tokens, token.id), undefined);
  assertEquals(await deletedEvents(data, token.id), 1);
}

Deno.test("the OIDC attempt sweep emits no second deletion event when a logout deletes the token at once", () =>
  withService(async (svc, data) => {
    const token = await commitToken(svc, 60_000);
    await addUncollectedAttempt(svc, token);
    const logout = { locks: [lockKeys.token(token.id)], shared: parentLocks([token.doc]) };
    await raceSweep(svc, data, token, logout, () => svc.oidcAttempts.sweep());
  }));

Deno.test("the OIDC attempt sweep emits no second deletion event when the token's method is deleted at once", () =>
  withService(async (svc, data) => {
    const token = await commitToken(svc, 60_000);
    await addUncollectedAttempt(svc, token);
    // A method delete's cascade holds the method's key exclusively, not the token's.
    const cascade = { locks: [lockKeys.method(token.doc.auth_method_id)] };
    await raceSweep(svc, data, token, cascade, () => svc.oidcAttempts.sweep());
  }));

Deno.test("the expired-token sweep emits no second deletion event when the token's org is deleted at once", () =>
  withService(async (svc, data) => {
    const token = await commitToken(svc, -1000);
    const cascade = { locks: [lockKeys.scope(token.doc.scope_id)] };
    await raceSweep(svc, data, token, cascade, () => svc.callers.sweep());
  }));
