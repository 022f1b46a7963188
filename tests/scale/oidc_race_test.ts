// An OIDC login's callback replayed on two wharf nodes at the same instant (one PostgreSQL database, a real OpenID
// provider): exactly one callback redeems the attempt and mints one token, the other gets the Boundary error, and
// the token is collected once from either node.

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { Client as AuthClient, createActiveOidcMethod, signInAdmin } from "../authmethods/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";
const rounds = 4;

clusterTest(
  "an OIDC callback replayed on two nodes at once is redeemed once: one token, one Boundary error",
  {},
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const urls = cluster.started.map((n) => n.url);
    const op = await startOidcProvider({ redirectUris: urls.map((u) => `${u}${callbackPath}`) });
    cluster.defer(() => op.stop());

    const anon = urls.map((u) => new AuthClient(u));
    const { admin } = await signInAdmin(urls[0]!);
    const id = await createActiveOidcMethod(admin, op, urls[0]!, {
      name: "corp-sso",
      attributes: { claims_scopes: ["email", "profile"] },
    });
    const adminOnTwo = new AuthClient(urls[1]!, admin.token);
    await eventually("the active method on node two", async () => {
      const r = await adminOnTwo.get(`/v1/auth-methods/${id}`);
      return r.body?.attributes?.state === "active-public" ? true : undefined;
    });

    const tokenIds = new Set<string>();
    for (let round = 0; round < rounds; round++) {
      const startedOn = anon[round % 2]!;
      const start = await startedOn.post(`/v1/auth-methods/${id}:authenticate`, { command: "start" });
      assertEquals(start.status, 200, JSON.stringify(start.body));
      const { auth_url: authUrl, token_id: tokenId } = start.body.attributes as Record<string, string>;
      const user = round % 2 === 0 ? oidcUsers.alice : oidcUsers.bob;
      const { callbackUrl } = await completeProviderLogin(authUrl!, {
        login: user.login,
        password: user.password,
      });
      assertEquals(callbackUrl.pathname, callbackPath);
      // The provider's redirect, replayed on both nodes at once.
      const answers = await Promise.all(urls.map(async (u) => {
        const r = await fetch(`${u}${callbackPath}${callbackUrl.search}`, { redirect: "manual" });
        const text = await r.text();
        return { status: r.status, location: r.headers.get("location") ?? "", text };
      }));
      const texts = JSON.stringify(answers);
      const redeemed = answers.filter((a) => a.status === 302);
      assertEquals(redeemed.length, 1, `round ${round}: ${texts}`);
      assert(new URL(redeemed[0]!.location).pathname === "/authentication-complete", texts);
      const refused = answers.find((a) => a.status !== 302)!;
      assertEquals(refused.status, 400, texts);
      const body = JSON.parse(refused.text);
      assertEquals([body.kind, body.message], [
        "InvalidArgument",
        "Unknown or expired authentication attempt.",
      ]);

      // The token is collected once, from either node.
      const polls = await Promise.all(anon.map((c) =>
        eventually("the attempt ready", async () => {
          const r = await c.post(`/v1/auth-methods/${id}:authenticate`, {
            command: "token",
            attributes: { token_id: tokenId },
          });
          return r.status === 202 ? undefined : r;
        })
      ));
      const collected = polls.filter((p) => p.status === 200);
      assertEquals(
        collected.length,
        1,
        `round ${round}: ${JSON.stringify(polls.map((p) => [p.status, p.body]))}`,
      );
      assertEquals(polls.find((p) => p.status !== 200)!.status, 403);
      const token = collected[0]!.body.attributes as { id: string; token: string };
      tokenIds.add(token.id);
      for (const u of urls) {
        const self = await eventually("the token on every node", async () => {
          const r = await new AuthClient(u, token.token).get(`/v1/auth-tokens/${token.id}`);
          return r.status === 200 ? r : undefined;
        });
        assertEquals(self.body.id, token.id);
      }
    }
    assertEquals(tokenIds.size, rounds);
  },
);
