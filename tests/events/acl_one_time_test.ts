// One-time tokens over HTTP: issued for the calling token, exchanged once (also under concurrency), expired,
// replaced by the next one, gone with their token, never stored as plaintext (docs/events.md#one-time-tokens).

import { assert, assertEquals } from "../helpers/assert.ts";
import { call, createToken, putPolicy, rootSecret, startEventsServer } from "./stream_helpers.ts";

type Issued = {
  OneTimeToken: { OneTimeSecretID: string; AccessorID: string; ExpiresAt: string };
  Index: number;
};

async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string) => {
    for await (const e of Deno.readDir(path)) {
      const child = `${path}/${e.name}`;
      if (e.isDirectory) await walk(child);
      else if (e.isFile && new TextDecoder().decode(await Deno.readFile(child)).includes(needle)) {
        found.push(child);
      }
    }
  };
  await walk(dir);
  return found;
}

Deno.test("acl one-time tokens are exchanged once for their token, and expire", async (t) => {
  const srv = await startEventsServer({ WHARF_ACL_ONE_TIME_TOKEN_TTL: "2s" });
  const issue = (token: string | null) =>
    call(srv.url, "PUT", "/v1/acl/token/onetime", { token: token ?? undefined });
  const exchange = (secret: unknown) =>
    call(srv.url, "POST", "/v1/acl/token/onetime/exchange", { body: { OneTimeSecretID: secret } });
  try {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    const token = await createToken(srv.url, ["nodes"]);

    await t.step(
      "issued for the calling token; exchanged once for it; a second exchange is refused",
      async () => {
        const before = Date.now();
        const r = await issue(token.SecretID);
        assertEquals(r.status, 200, r.text);
        const issued = r.json as Issued;
        assertEquals(issued.OneTimeToken.AccessorID, token.AccessorID);
        assertEquals(r.headers.get("X-Nomad-Index"), String(issued.Index));
        const ttl = Date.parse(issued.OneTimeToken.ExpiresAt) - before;
        assert(ttl >= 1900 && ttl <= 2500, `expires in ${ttl} ms`);
        const secret = issued.OneTimeToken.OneTimeSecretID;
        assertEquals(await filesContaining(srv.dataDir, secret), [], "the one-time secret is not on disk");
        if (!srv.env.WHARF_DATABASE_URL) {
          // The search can find what is there: the record itself is on disk, under its accessor.
          assert((await filesContaining(srv.dataDir, issued.OneTimeToken.AccessorID)).length > 0);
        }

        const got = await exchange(secret);
        assertEquals(got.status, 200, got.text);
        const exchanged = got.json as { Token: { AccessorID: string; SecretID: string }; Index: number };
        assertEquals([exchanged.Token.AccessorID, exchanged.Token.SecretID], [
          token.AccessorID,
          token.SecretID,
        ]);
        const again = await exchange(secret);
        assertEquals([again.status, again.text], [403, "Permission denied"]);
      },
    );

    await t.step("of three concurrent exchanges of one secret, exactly one gets the token", async () => {
      const secret = ((await issue(token.SecretID)).json as Issued).OneTimeToken.OneTimeSecretID;
      const answers = await Promise.all([exchange(secret), exchange(secret), exchange(secret)]);
      assertEquals(answers.map((a) => a.status).sort(), [200, 403, 403]);
    });

    await t.step(
      "a new one replaces the last; unknown, empty and anonymous requests are refused",
      async () => {
        const first = ((await issue(token.SecretID)).json as Issued).OneTimeToken.OneTimeSecretID;
        const second = ((await issue(token.SecretID)).json as Issued).OneTimeToken.OneTimeSecretID;
        assertEquals((await exchange(first)).status, 403);
        assertEquals((await exchange(second)).status, 200);
        for (const bad of [crypto.randomUUID(), "", "not-a-uuid", null]) {
          const r = await exchange(bad);
          assertEquals([r.status, r.text], [403, "Permission denied"], String(bad));
        }
        const wrongType = await exchange(42);
        assertEquals(wrongType.status, 400);
        const anonymous = await issue(null);
        assertEquals([anonymous.status, anonymous.text], [403, "Permission denied"]);
        const get = await call(srv.url, "GET", "/v1/acl/token/onetime", { token: rootSecret });
        assertEquals(get.status, 405);
      },
    );

    await t.step("an expired one is refused; one whose token was deleted is refused", async () => {
      const expiring = ((await issue(token.SecretID)).json as Issued).OneTimeToken.OneTimeSecretID;
      const other = await createToken(srv.url, ["nodes"]);
      const orphan = ((await issue(other.SecretID)).json as Issued).OneTimeToken.OneTimeSecretID;
      const del = await call(srv.url, "DELETE", `/v1/acl/token/${other.AccessorID}`, { token: rootSecret });
      assertEquals(del.status, 200);
      assertEquals((await exchange(orphan)).status, 403);
      await new Promise((r) => setTimeout(r, 2100));
      const late = await exchange(expiring);
      assertEquals([late.status, late.text], [403, "Permission denied"]);
    });
  } finally {
    await srv.stop();
  }
});
