// PATCH and change-state of OIDC methods against a real OpenID provider: discovery validation on update,
// the disable flag (not sticky), dry runs, completeness of active methods, state events.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startOidcProvider } from "../fixtures/oidc_provider.ts";
import { createOidcMethod, startAuthServer } from "./helpers.ts";
import type { TestServer } from "../helpers/server.ts";

Deno.test("OIDC updates run discovery validation unless disabled, and dry runs change nothing", async () => {
  const f = await startAuthServer();
  const op = await startOidcProvider({
    redirectUris: [`${f.server.url}/v1/auth-methods/oidc:authenticate:callback`],
  });
  try {
    const { id } = await createOidcMethod(f.admin, op, f.server.url);
    const url = `/v1/auth-methods/${id}`;
    const ok = await f.admin.patch(url, { version: 1, attributes: { max_age: 60 } });
    assertEquals(ok.status, 200, JSON.stringify(ok.body));
    const unsupported = op.signingAlg === "ES384" ? "PS512" : "ES384";
    const bad = await f.admin.patch(url, { version: 2, attributes: { signing_algorithms: [unsupported] } });
    assertEquals(bad.status, 400);
    assertStringIncludes(bad.body.message, "Discovered configuration validation failed: ");
    const forced = await f.admin.patch(url, {
      version: 2,
      attributes: { signing_algorithms: [unsupported], disable_discovered_config_validation: true },
    });
    assertEquals(forced.status, 200);
    assertEquals(forced.body.attributes.disable_discovered_config_validation, true);
    const notSticky = await f.admin.patch(url, { version: 3, attributes: { max_age: 0 } });
    assertEquals(notSticky.status, 400, "the flag applies only to the request that sent it");
    const dry = await f.admin.patch(url, {
      version: 3,
      attributes: { dry_run: true, signing_algorithms: [op.signingAlg], max_age: 0 },
    });
    assertEquals(dry.status, 200, JSON.stringify(dry.body));
    assertEquals(dry.body.attributes.dry_run, true);
    assertEquals(dry.body.version, 3);
    assertEquals(dry.body.attributes.max_age, 0);
    assertEquals((await f.admin.get(url)).body.attributes.max_age, 60, "a dry run saves nothing");
    const dryFlag = await f.admin.patch(url, {
      version: 3,
      attributes: { dry_run: true, disable_discovered_config_validation: true },
    });
    assertEquals(dryFlag.status, 400);
    const fixed = await f.admin.patch(url, {
      version: 3,
      attributes: { signing_algorithms: [op.signingAlg] },
    });
    assertEquals(fixed.status, 200);

    const activate = await f.admin.post(`${url}:change-state`, {
      version: 4,
      attributes: { state: "active-private" },
    });
    assertEquals(activate.status, 200, JSON.stringify(activate.body));
    assertEquals(activate.body.version, 5);
    assertEquals(activate.body.attributes.state, "active-private");
    const again = await f.admin.post(`${url}:change-state`, {
      version: 5,
      attributes: { state: "active-private" },
    });
    assertEquals(again.body.version, 5, "the same state is a no-op");
    const anonList = await f.anon.get("/v1/auth-methods?scope_id=global");
    assert(!anonList.body.items.some((m: { id: string }) => m.id === id), "active-private is not listed");
    const started = await f.anon.post(`${url}:authenticate`, { command: "start" });
    assertEquals(started.status, 200, "active-private is usable by id");
    const incomplete = await f.admin.patch(url, { version: 5, attributes: { signing_algorithms: null } });
    assertEquals(incomplete.status, 400);
    assertEquals(incomplete.body.details.request_fields[0].name, "attributes.signing_algorithms");
    const sub = await f.admin.patch(url, { version: 5, attributes: { account_claim_maps: ["oid=sub"] } });
    assertEquals(sub.body.details.request_fields[0].name, "attributes.account_claim_maps");
    const off = await f.admin.post(`${url}:change-state`, { version: 5, attributes: { state: "inactive" } });
    assertEquals(off.body.attributes.state, "inactive");
    const events = [];
    for await (const { line } of f.server.server.data.log.read(1)) events.push(...JSON.parse(line).Events);
    const changes = events.filter((e: { Type: string }) => e.Type === "AuthMethodStateChanged");
    assertEquals(
      changes.map((
        e: { Payload: { AuthMethod: { from: string; to: string } } },
      ) => [e.Payload.AuthMethod.from, e.Payload.AuthMethod.to]),
      [
        ["inactive", "active-private"],
        ["active-private", "inactive"],
      ],
    );
  } finally {
    await op.stop();
    await f.stop();
  }
});

Deno.test("tokens stop working after their lifetime and are swept at the next start", async () => {
  const f = await startAuthServer({ WHARF_AUTH_TOKEN_TTL: "1s" });
  const tokenId = f.admin.token!.slice(0, 13);
  let restarted: TestServer | undefined;
  try {
    assertEquals((await f.admin.get(`/v1/auth-tokens/${tokenId}`)).status, 200);
    await new Promise((r) => setTimeout(r, 1200));
    assertEquals((await f.admin.get(`/v1/auth-tokens/${tokenId}`)).status, 401);
    assert(f.server.server.data.store.get("auth/tokens", tokenId));
    restarted = await f.server.restart();
    assertEquals(restarted.server.data.store.get("auth/tokens", tokenId), undefined);
  } finally {
    if (restarted) await restarted.stop();
    else await f.stop();
  }
});
