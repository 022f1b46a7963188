// The durable OIDC attempt store on a real data dir: sealed secrets, single-use state and collection under
// races, the open-attempt cap, and the sweep of expired attempts with their uncollected tokens.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import { collections } from "../../routes/authmethods/common.ts";
import {
  type AttemptDoc,
  AttemptExpiredError,
  attemptsCollection,
  maxOpenAttempts,
  OidcAttempts,
} from "../../routes/authmethods/oidc_attempts.ts";
import { mintToken } from "../../routes/authmethods/tokens.ts";
import { withAppContext } from "../helpers/app_context.ts";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";

const methodId = "amoidc_attempttest";
const isApiError = (err: unknown) => err instanceof ApiError;

function withAttempts(ttlMs: number, fn: (attempts: OidcAttempts, app: AppContext) => Promise<void>) {
  return withAppContext({}, async (app) => {
    const attempts = new OidcAttempts(app, ttlMs);
    try {
      await fn(attempts, app);
    } finally {
      attempts.close();
    }
  });
}

function create(attempts: OidcAttempts, n: number) {
  return attempts.create({
    tokenId: `oidc_token-id-${n}`,
    state: `state-value-${n}`,
    methodId,
    secrets: { nonce: `nonce-value-${n}`, code_verifier: `verifier-value-${n}`, roundtrip_payload: { n } },
    delivery: "token",
    typeEcho: undefined,
  });
}

/** Redeems attempt `n` and commits a minted token for it, as the callback does; returns the token. */
async function makeReady(attempts: OidcAttempts, app: AppContext, n: number) {
  const redeemed = await attempts.redeem(`state-value-${n}`, methodId);
  const token = mintToken({ ttlMs: 3_600_000, staleMs: 3_600_000 }, {
    userId: "u_attempttest",
    accountId: "acctoidc_attempttest",
    methodId,
    scopeId: "global",
  });
  await app.data.store.transact([attempts.lockOf(redeemed)], () => ({
    writes: [
      { collection: collections.tokens, id: token.id, doc: token.doc, ifVersion: 0 },
      attempts.readyWrite(redeemed, token),
    ],
  }));
  return token;
}

Deno.test("stored attempts keep state and token_id as HMACs and the verifier, nonce and payload sealed", () =>
  withAttempts(60_000, async (attempts, app) => {
    await create(attempts, 1);
    const token = await makeReady(attempts, app, 1);
    const stored = JSON.stringify([...app.data.store.list(attemptsCollection)]);
    for (
      const plain of ["state-value-1", "oidc_token-id-1", "nonce-value-1", "verifier-value-1", token.token]
    ) {
      assert(!stored.includes(plain), `${plain} is stored in plaintext`);
    }
    const replay = await assertRejects(() => attempts.redeem("state-value-1", methodId), isApiError);
    assertEquals((replay as ApiError).message, "Unknown or expired authentication attempt.");
  }));

Deno.test("two concurrent callbacks with one state: exactly one redeems it", () =>
  withAttempts(60_000, async (attempts) => {
    await create(attempts, 2);
    const results = await Promise.allSettled([
      attempts.redeem("state-value-2", methodId),
      attempts.redeem("state-value-2", methodId),
    ]);
    assertEquals(results.filter((r) => r.status === "fulfilled").length, 1);
    const won = results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ secrets: unknown }>;
    assertEquals(won.value.secrets, {
      nonce: "nonce-value-2",
      code_verifier: "verifier-value-2",
      roundtrip_payload: { n: 2 },
    });
  }));

Deno.test("a callback naming another method consumes nothing", () =>
  withAttempts(60_000, async (attempts) => {
    await create(attempts, 3);
    await assertRejects(() => attempts.redeem("state-value-3", "amoidc_othermethod"), isApiError);
    assertEquals((await attempts.redeem("state-value-3", methodId)).doc.status, "redeeming");
  }));

Deno.test("two concurrent token polls of a ready attempt: one gets the token, the other nothing", () =>
  withAttempts(60_000, async (attempts, app) => {
    await create(attempts, 4);
    assertEquals(await attempts.collect("oidc_token-id-4", methodId, "api"), { status: "pending" });
    const token = await makeReady(attempts, app, 4);
    assertEquals(await attempts.collect("oidc_token-id-4", "amoidc_othermethod", "api"), undefined);
    const [a, b] = await Promise.all([
      attempts.collect("oidc_token-id-4", methodId, "api"),
      attempts.collect("oidc_token-id-4", methodId, "api"),
    ]);
    const got = [a, b].filter((r) => r?.status === "ready");
    assertEquals(got.length, 1);
    assertEquals([a, b].filter((r) => r === undefined).length, 1);
    assertEquals(got[0]!.status === "ready" && got[0]!.token.token, token.token);
    assertEquals(app.data.store.count(attemptsCollection), 0);
  }));

Deno.test("the open-attempt cap refuses start with 503 until the sweep removes expired attempts", () =>
  withAttempts(60_000, async (attempts, app) => {
    // Expired attempts not yet swept still count, as in-memory ones did before they were persisted.
    const past = new Date(Date.now() - 1000).toISOString();
    const filler: AttemptDoc = {
      auth_method_id: methodId,
      status: "started",
      created_time: past,
      expiration_time: past,
      delivery: "token",
      secrets: "sealed",
    };
    await app.data.store.transact([], () => ({
      writes: Array.from({ length: maxOpenAttempts }, (_, i) => ({
        collection: attemptsCollection,
        id: `filler${i}`,
        doc: filler,
      })),
    }));
    const refused = await assertRejects(() => create(attempts, 5), isApiError);
    assertEquals((refused as ApiError).status, 503);
    assertEquals(await attempts.sweep(), maxOpenAttempts);
    assertEquals(app.data.store.count(attemptsCollection), 0);
    await create(attempts, 5);
  }));

Deno.test("the sweep deletes an expired attempt's uncollected token and leaves live attempts", () =>
  withAttempts(60_000, async (attempts, app) => {
    await create(attempts, 6);
    const token = await makeReady(attempts, app, 6);
    const expiry = Date.parse(
      [...app.data.store.list<AttemptDoc>(attemptsCollection)][0]!.doc.expiration_time,
    );
    await new Promise((r) => setTimeout(r, 20));
    await create(attempts, 7);
    // Swept as of a moment past attempt 6's expiry, before attempt 7's (created later).
    assertEquals(await attempts.sweep(expiry + 1), 1);
    assertEquals(app.data.store.get(collections.tokens, token.id), undefined);
    assertEquals(app.data.store.count(attemptsCollection), 1);
    assertEquals(await attempts.collect("oidc_token-id-6", methodId, "api"), undefined);
    assertEquals(await attempts.collect("oidc_token-id-7", methodId, "api"), { status: "pending" });
    const deleted = [];
    for await (const { line } of app.data.log.read(1)) {
      const batch = JSON.parse(line) as { Events: Array<{ Type: string; Key: string; Payload: unknown }> };
      deleted.push(...batch.Events.filter((e) => e.Type === "AuthTokenDeleted"));
    }
    assertEquals(deleted.map((e) => e.Key), [token.id]);
    assert(JSON.stringify(deleted[0]!.Payload).includes('"uncollected"'));
  }));

Deno.test("an attempt swept while its callback talks to the provider makes the ready write fail as expired", () =>
  withAttempts(60_000, async (attempts) => {
    await create(attempts, 7);
    const redeemed = await attempts.redeem("state-value-7", methodId);
    // The sweep runs as if the TTL had passed during the code exchange.
    assertEquals(await attempts.sweep(Date.now() + 120_000), 1);
    const token = mintToken({ ttlMs: 3_600_000, staleMs: 3_600_000 }, {
      userId: "u_attempttest",
      accountId: "acctoidc_attempttest",
      methodId,
      scopeId: "global",
    });
    let thrown: unknown;
    try {
      attempts.readyWrite(redeemed, token);
    } catch (err) {
      thrown = err;
    }
    assert(thrown instanceof AttemptExpiredError, `expected AttemptExpiredError, got ${thrown}`);
    assertEquals(await attempts.collect("oidc_token-id-7", methodId, "api"), undefined);
  }));
