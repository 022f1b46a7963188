// OIDC login attempts survive a server restart (kill -9 and clean stop): a real provider, a child-process wharf
// restarted on the same data dir, expired attempts swept at start, and no attempt secret on disk or in logs.

import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { SuccessiveServers } from "../helpers/successive_servers.ts";
import {
  type OidcProviderFixture,
  oidcUsers,
  startOidcProvider,
  wharfMethodAttributes,
} from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { adminPassword, callApi, passwordLogin } from "../fixtures/wharf_auth.ts";
import { packedCollections } from "../../app.ts";
import { DataDir } from "../../lib/store/mod.ts";
import { dataDirText } from "../helpers/files.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";
const baseEnv: Record<string, string> = {
  WHARF_INITIAL_ADMIN_PASSWORD: adminPassword,
  WHARF_ARGON2_MEMORY_KIB: "1024",
  WHARF_ARGON2_TIME: "1",
};

/** The OIDC method's servers, one after another; `restart` ends the current one by `signal`. */
class Deployment extends SuccessiveServers {
  constructor(dir: string) {
    super(dir, baseEnv);
  }

  async restart(signal: Deno.Signal, env: Record<string, string> = {}): Promise<void> {
    await this.stop(signal);
    await this.start(env);
  }

  get url(): string {
    return this.server.url;
  }

  authenticate(methodId: string, body: Record<string, unknown>) {
    return callApi(this.url, "POST", `/v1/auth-methods/${methodId}:authenticate`, body);
  }

  poll(methodId: string, tokenId: string) {
    return this.authenticate(methodId, { command: "token", attributes: { token_id: tokenId } });
  }
}

interface Started {
  authUrl: string;
  tokenId: string;
}

/** What the test saw of each attempt: none of it may be stored or printed in plaintext. */
const seen = {
  states: [] as string[],
  nonces: [] as string[],
  challenges: [] as string[],
  tokenIds: [] as string[],
};

async function start(d: Deployment, methodId: string, roundtrip?: Record<string, unknown>): Promise<Started> {
  const r = await d.authenticate(methodId, {
    command: "start",
    attributes: roundtrip ? { roundtrip_payload: roundtrip } : {},
  });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  const attrs = r.body.attributes as Record<string, string>;
  const q = new URL(attrs.auth_url!).searchParams;
  seen.states.push(q.get("state")!);
  seen.nonces.push(q.get("nonce")!);
  seen.challenges.push(q.get("code_challenge")!);
  seen.tokenIds.push(attrs.token_id!);
  return { authUrl: attrs.auth_url!, tokenId: attrs.token_id! };
}

/** The provider's redirect, sent to whichever server runs now (as a load balancer would after a deploy). */
async function providerCallback(d: Deployment, authUrl: string): Promise<URL> {
  const { callbackUrl } = await completeProviderLogin(authUrl, {
    login: oidcUsers.alice.login,
    password: oidcUsers.alice.password,
  });
  assertEquals(callbackUrl.pathname, callbackPath);
  return new URL(callbackUrl.pathname + callbackUrl.search, d.url);
}

async function callback(url: URL): Promise<{ status: number; location: string | null; body: string }> {
  const r = await fetch(url, { redirect: "manual" });
  return { status: r.status, location: r.headers.get("location"), body: await r.text() };
}

async function setUp(d: Deployment, op: OidcProviderFixture): Promise<{ methodId: string; admin: string }> {
  const list = await callApi(d.url, "GET", "/v1/auth-methods?scope_id=global");
  const pw = (list.body.items as Array<Record<string, unknown>>).find((m) => m.type === "password")!;
  const admin = await passwordLogin(d.url, String(pw.id), "admin", adminPassword);
  const created = await callApi(d.url, "POST", "/v1/auth-methods", {
    scope_id: "global",
    type: "oidc",
    name: "restart-sso",
    attributes: { ...wharfMethodAttributes(op, d.url), claims_scopes: ["email", "profile"] },
  }, admin);
  assertEquals(created.status, 200, JSON.stringify(created.body));
  const methodId = String(created.body.id);
  const activated = await callApi(d.url, "POST", `/v1/auth-methods/${methodId}:change-state`, {
    version: created.body.version,
    attributes: { state: "active-public" },
  }, admin);
  assertEquals(activated.status, 200, JSON.stringify(activated.body));
  return { methodId, admin };
}

/** Every batch of the event log, oldest first. */
async function logBatches(dir: string): Promise<Array<{ Events: Array<Record<string, unknown>> }>> {
  const names = [...Deno.readDirSync(`${dir}/events`)].map((e) => e.name).filter((n) =>
    n.endsWith(".ndjson")
  );
  const out = [];
  for (const name of names.sort()) {
    for (const line of (await Deno.readTextFile(`${dir}/events/${name}`)).split("\n")) {
      if (line.trim()) out.push(JSON.parse(line));
    }
  }
  return out;
}

function assertNoSecrets(where: string, text: string): void {
  for (const s of [...seen.states, ...seen.nonces, ...seen.tokenIds]) {
    assert(!text.includes(s), `${where} holds an attempt secret in plaintext`);
  }
  assertEquals(text.match(/at_[0-9A-Za-z]{10}_s1[1-9A-HJ-NP-Za-km-z]{20,}/g), null, `${where} holds a token`);
  // The PKCE verifier is never shown to the client: look for any 43-character base64url word whose S256
  // is one of the challenges.
  for (const word of text.match(/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g) ?? []) {
    const challenge = createHash("sha256").update(word).digest("base64url");
    assert(!seen.challenges.includes(challenge), `${where} holds a PKCE code verifier`);
  }
  assert(!text.includes("roundtrip-marker-7f3a"), `${where} holds a round-trip payload in plaintext`);
}

Deno.test("OIDC login attempts survive wharf restarts on the same data dir", async (t) => {
  const d = new Deployment(await Deno.makeTempDir({ prefix: "wharf-oidc-restart-" }));
  await d.start();
  const op = await startOidcProvider({ redirectUris: [`${d.url}${callbackPath}`] });
  try {
    const { methodId, admin } = await setUp(d, op);

    let pendingToken = "";
    await t.step(
      "a login started before a kill -9 completes after the restart; the token works",
      async () => {
        const { authUrl, tokenId } = await start(d, methodId, {
          back: "/ui",
          marker: "roundtrip-marker-7f3a",
        });
        assertEquals((await d.poll(methodId, tokenId)).status, 202);
        await d.restart("SIGKILL");
        assertEquals((await d.poll(methodId, tokenId)).status, 202);

        const url = await providerCallback(d, authUrl);
        const cb = await callback(url);
        assertEquals(cb.status, 302, cb.body);
        const final = new URL(cb.location!);
        assertEquals(final.pathname, "/authentication-complete");
        assertEquals(JSON.parse(final.searchParams.get("roundtrip_payload")!).back, "/ui");
        const replay = await callback(url);
        assertEquals(replay.status, 400);
        assertEquals(JSON.parse(replay.body).message, "Unknown or expired authentication attempt.");

        const ready = await d.poll(methodId, tokenId);
        assertEquals(ready.status, 200, JSON.stringify(ready.body));
        const token = ready.body.attributes as Record<string, string>;
        assertMatch(token.token!, /^at_[0-9A-Za-z]{10}_s1/);
        const self = await callApi(d.url, "GET", `/v1/auth-tokens/${token.id}`, undefined, token.token);
        assertEquals(self.status, 200, JSON.stringify(self.body));
        assertEquals((await d.poll(methodId, tokenId)).status, 403);
      },
    );

    await t.step("a token minted before a restart is collected after it, exactly once", async () => {
      const { authUrl, tokenId } = await start(d, methodId);
      const cb = await callback(await providerCallback(d, authUrl));
      assertEquals(cb.status, 302, cb.body);
      pendingToken = tokenId;
      // A clean stop this time: the attempt comes back from the checkpointed documents, not the log replay.
      await d.restart("SIGTERM");
      const ready = await d.poll(methodId, pendingToken);
      assertEquals(ready.status, 200, JSON.stringify(ready.body));
      const token = ready.body.attributes as Record<string, string>;
      const self = await callApi(d.url, "GET", `/v1/auth-tokens/${token.id}`, undefined, token.token);
      assertEquals(self.status, 200);
      const again = await d.poll(methodId, pendingToken);
      assertEquals(again.status, 403);
      assertEquals(again.body.kind, "PermissionDenied");
      await d.restart("SIGKILL");
      assertEquals((await d.poll(methodId, pendingToken)).status, 403);
    });

    await t.step("attempts that expired while wharf was down are gone after the restart", async () => {
      const ttl = { WHARF_OIDC_ATTEMPT_TTL: "4s" };
      await d.restart("SIGTERM", ttl);
      const begun = Date.now();
      const open = await start(d, methodId);
      const minted = await start(d, methodId);
      const cb = await callback(await providerCallback(d, minted.authUrl));
      assertEquals(cb.status, 302, cb.body);
      await d.stop("SIGTERM");
      // Bounded wait until both attempts are past their TTL; the next server sweeps them at start.
      await new Promise((r) => setTimeout(r, Math.max(0, begun + 4500 - Date.now())));
      await d.start(ttl);
      assertEquals((await d.poll(methodId, open.tokenId)).status, 403);
      assertEquals((await d.poll(methodId, minted.tokenId)).status, 403);
      const late = await callback(await providerCallback(d, open.authUrl));
      assertEquals(late.status, 400);
      await d.stop("SIGTERM");

      // What a server opening this data dir would load (the collection is packed: no file per attempt).
      const data = await DataDir.open(d.dir, { packedCollections });
      try {
        assertEquals([...data.store.list("auth/oidc_attempts")].map((a) => a.id), []);
        assert(data.store.count("auth/tokens") > 0, "the data dir holds the flow's other documents");
      } finally {
        await data.close();
      }
      // The token minted for the uncollected attempt was deleted with it.
      const batches = await logBatches(d.dir);
      const issuedIds = batches.flatMap((b) => b.Events)
        .filter((e) => e.Type === "AuthTokenIssued" && e.Key && JSON.stringify(e).includes(methodId))
        .map((e) => String(e.Key));
      const uncollected = batches.flatMap((b) => b.Events)
        .filter((e) => e.Type === "AuthTokenDeleted" && JSON.stringify(e).includes('"uncollected"'))
        .map((e) => String(e.Key));
      assertEquals(uncollected.length, 1);
      assert(issuedIds.includes(uncollected[0]!));
    });

    await t.step("deactivating or deleting the method of an open attempt behaves as before", async () => {
      await d.start();
      const open = await start(d, methodId);
      const current = await callApi(d.url, "GET", `/v1/auth-methods/${methodId}`, undefined, admin);
      const inactive = await callApi(d.url, "POST", `/v1/auth-methods/${methodId}:change-state`, {
        version: current.body.version,
        attributes: { state: "inactive" },
      }, admin);
      assertEquals(inactive.status, 200, JSON.stringify(inactive.body));
      // An attempt started while the method was active still completes.
      const cb = await callback(await providerCallback(d, open.authUrl));
      assertEquals(cb.status, 302, cb.body);
      assertEquals((await d.poll(methodId, open.tokenId)).status, 200);

      const reactivated = await callApi(d.url, "POST", `/v1/auth-methods/${methodId}:change-state`, {
        version: Number(inactive.body.version),
        attributes: { state: "active-public" },
      }, admin);
      assertEquals(reactivated.status, 200, JSON.stringify(reactivated.body));
      const orphan = await start(d, methodId);
      assertEquals(
        (await callApi(d.url, "DELETE", `/v1/auth-methods/${methodId}`, undefined, admin)).status,
        200,
      );
      const late = await callback(await providerCallback(d, orphan.authUrl));
      assertEquals(late.status, 404, late.body);
      assertEquals((await d.poll(methodId, orphan.tokenId)).status, 404);
      await d.stop("SIGTERM");
    });

    await t.step("no attempt secret is in the data dir or the server output", async () => {
      assertNoSecrets("the data dir", await dataDirText(d.dir));
      assertNoSecrets("the server output", d.output);
    });
  } finally {
    await d.stop("SIGKILL").catch(() => {});
    await op.stop();
    await Deno.remove(d.dir, { recursive: true }).catch(() => {});
  }
});
