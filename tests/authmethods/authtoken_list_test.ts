// GET /v1/auth-tokens?scope_id=… (what `boundary auth-tokens list` calls) and scope_id on a token's read,
// through the HTTP API of a started wharf (docs/auth-methods.md#auth-tokens): who sees which tokens, filter,
// pages with list tokens, a refresh with removed_ids, org scopes and recursive.

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import {
  Client,
  createActiveOidcMethod,
  fieldNames,
  listEveryPage,
  login,
  makeUser,
  withAuthServer,
} from "./helpers.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";

/** Every page of /v1/auth-tokens?<query> as `c` sees it (listEveryPage). */
const listAll = (c: Client, query: string, token?: string) =>
  listEveryPage((p) => c.get(p), `/v1/auth-tokens?${query}`, token);

const tokenId = (token: string) => token.slice(0, token.indexOf("_s1"));

Deno.test("auth-token list: scope, visibility, filter, pages, refresh, org scopes; read shows scope_id", () =>
  withAuthServer(async (f) => {
    const missing = await f.admin.get("/v1/auth-tokens");
    assertEquals(missing.status, 400);
    assertEquals(fieldNames(missing.body), ["scope_id"]);
    assertEquals((await f.anon.get("/v1/auth-tokens?scope_id=global")).status, 401);

    const ann = await makeUser(f, "ann");
    const ben = await makeUser(f, "ben");
    const annSecond = await login(f.anon, f.primaryMethodId, "ann", "user-password-1");
    const adminToken = tokenId(f.admin.token!);
    const annTokens = [tokenId(ann.client.token!), tokenId(annSecond)];
    const benToken = tokenId(ben.client.token!);

    // The read shows the scope the token was issued in.
    const read = await ann.client.get(`/v1/auth-tokens/${annTokens[0]}`);
    assertEquals(read.status, 200, JSON.stringify(read.body));
    assertEquals(read.body.scope_id, "global");
    assertEquals(read.body.token, undefined);

    // An admin sees every token of the scope, newest first; a user only their own.
    await new Promise((r) => setTimeout(r, 20));
    const all = await listAll(f.admin, "scope_id=global&page_size=2");
    assertEquals(all.pages, 2);
    assertEquals(all.ids, [annTokens[1], benToken, annTokens[0], adminToken]);
    assert(
      all.items.every((i) => i.scope_id === "global" && i.token === undefined),
      JSON.stringify(all.items),
    );
    assertEquals((await listAll(ann.client, "scope_id=global")).ids, [annTokens[1], annTokens[0]]);
    const byUser = await listAll(
      f.admin,
      `scope_id=global&filter=${encodeURIComponent(`"/item/user_id" == "${read.body.user_id}"`)}`,
    );
    assertEquals(byUser.ids, [annTokens[1], annTokens[0]]);

    // Refresh: :set-password ends every token of ann's user (wharf's choice), a new login adds one.
    const account = await f.admin.get(`/v1/accounts/${ann.accountId}`);
    const reset = await f.admin.post(`/v1/accounts/${ann.accountId}:set-password`, {
      version: account.body.version,
      password: "user-password-2",
    });
    assertEquals(reset.status, 200, JSON.stringify(reset.body));
    assertEquals((await ann.client.get(`/v1/auth-tokens/${annTokens[0]}`)).status, 401);
    const annThird = tokenId(await login(f.anon, f.primaryMethodId, "ann", "user-password-2"));
    const refreshed = await listAll(f.admin, "scope_id=global&page_size=2", all.token);
    assertEquals(refreshed.ids, [annThird]);
    assertEquals(refreshed.removed, [...annTokens].sort());

    // Org scopes: a token issued by an org's method is listed there, and from global only with recursive.
    const org = await f.admin.post("/v1/scopes", { scope_id: "global", name: "acme" });
    assertEquals(org.status, 200, JSON.stringify(org.body));
    const method = await f.admin.post("/v1/auth-methods", { scope_id: org.body.id, type: "password" });
    assertEquals(method.status, 200, JSON.stringify(method.body));
    const orgUser = await makeUser(f, "olga", method.body.id);
    const orgToken = tokenId(orgUser.client.token!);
    assertEquals((await listAll(f.admin, `scope_id=${org.body.id}`)).ids, [orgToken]);
    assert(!(await listAll(f.admin, "scope_id=global")).ids.includes(orgToken));
    assertEquals((await listAll(f.admin, "scope_id=global&recursive=true")).ids[0], orgToken);
    const orgRead = await f.admin.get(`/v1/auth-tokens/${orgToken}`);
    assertEquals(orgRead.body.scope_id, org.body.id);
    assertEquals((await f.admin.get("/v1/auth-tokens?scope_id=o_nosuchscope1")).status, 404);

    // A user's refresh names only their own tokens: another user's new login is neither an item nor a removed id.
    const annNow = new Client(f.anon.url, await login(f.anon, f.primaryMethodId, "ann", "user-password-2"));
    const annList = await listAll(annNow, "scope_id=global");
    assertEquals(annList.ids.length, 2);
    const benAgain = tokenId(await login(f.anon, f.primaryMethodId, "ben", "user-password-1"));
    const annRefresh = await listAll(annNow, "scope_id=global", annList.token);
    // A refresh re-sends every token whose updated_time is at or after the previous phase's start, and write times
    // never repeat (nowMs runs ahead of the wall clock when writes crowd a millisecond): ann's newest token can come
    // again, as Boundary's refresh look-back re-sends recent items. Only ann's own tokens may appear, none removed.
    const annNewest = tokenId(annNow.token!);
    assert(
      annRefresh.ids.length === 0 || (annRefresh.ids.length === 1 && annRefresh.ids[0] === annNewest),
      `only ann's newest token may come again: ${JSON.stringify(annRefresh.ids)}`,
    );
    assertEquals(annRefresh.removed, []);
    assert(!JSON.stringify(annRefresh).includes(benAgain));
  }));

Deno.test("auth-token list: a refresh names the token of an uncollected OIDC login that the sweep deleted", () =>
  withAuthServer(async (f) => {
    const op = await startOidcProvider({ redirectUris: [`${f.server.url}${callbackPath}`] });
    try {
      const methodId = await createActiveOidcMethod(f.admin, op, f.server.url);
      const start = await f.anon.post(`/v1/auth-methods/${methodId}:authenticate`, { command: "start" });
      assertEquals(start.status, 200, JSON.stringify(start.body));
      const { callbackUrl } = await completeProviderLogin(start.body.attributes.auth_url, {
        login: oidcUsers.alice.login,
        password: oidcUsers.alice.password,
      });
      const callback = await fetch(callbackUrl, { redirect: "manual" });
      await callback.body?.cancel();
      assertEquals(callback.status, 302);
      // The token is minted and listed, but its login never collects it.
      const listed = await listAll(f.admin, "scope_id=global");
      const minted = listed.items.find((i) => i.auth_method_id === methodId);
      assert(minted, JSON.stringify(listed.items));
      const mintedId = String(minted.id);
      // The attempt expires (2 s) and the sweep deletes it with its token.
      const deadline = Date.now() + 10_000;
      while ((await f.admin.get(`/v1/auth-tokens/${mintedId}`)).status !== 404) {
        assert(Date.now() < deadline, "the uncollected token was not swept in 10 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      const refreshed = await listAll(f.admin, "scope_id=global", listed.token);
      assertEquals(refreshed.removed, [mintedId]);
    } finally {
      await op.stop();
    }
  }, { WHARF_OIDC_ATTEMPT_TTL: "2s" }));
