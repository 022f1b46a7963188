// `nomad login` behind a load balancer: auth-url answered by one wharf node, complete-auth by the other (one
// PostgreSQL database, blobs in Swift, a real OpenID provider) succeeds; the same callback replayed on the first
// node, or sent to both nodes at once, is redeemed once (docs/events.md#sso-login).

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import {
  completeAuthBody,
  corpAuthUrl,
  createCorpOidcMethod,
  ssoRedirectUri,
} from "../events/sso_oidc_helpers.ts";
import { call, rootSecret } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const noRequest = "no OIDC request found for client nonce";

clusterTest(
  "Nomad OIDC login: auth-url on one node, complete-auth on the other; replays refused on either node",
  { bucket: "nomad-oidc" },
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const [one, two] = cluster.started.map((n) => n.url) as [string, string];
    const op = await startOidcProvider({ redirectUris: [ssoRedirectUri] });
    cluster.defer(() => op.stop());
    const put = (url: string, path: string, body: unknown, token?: string) =>
      call(url, "PUT", path, { body, token });

    await createCorpOidcMethod(one, op, { config: { OIDCScopes: ["email"] } });
    const rule = await put(one, "/v1/acl/binding-rule", {
      AuthMethod: "corp",
      BindType: "management",
    }, rootSecret);
    assertEquals(rule.status, 200, rule.text);
    await eventually("the binding rule on node two", async () => {
      const r = await call(two, "GET", "/v1/acl/binding-rules", { token: rootSecret });
      return r.status === 200 && (r.json as unknown[]).length === 1 ? true : undefined;
    });

    /** auth-url on `url`, then the provider's login: the complete-auth body. */
    const begin = async (url: string, nonce: string) =>
      await completeAuthBody(await corpAuthUrl(url, nonce), nonce, oidcUsers.alice);

    // Started on node one, completed on node two; the replay on node one is refused.
    const first = await begin(one, "nonce-cross-node-0123456789");
    const done = await put(two, "/v1/acl/oidc/complete-auth", first);
    assertEquals(done.status, 200, done.text);
    const secret = String((done.json as Record<string, unknown>).SecretID);
    assertEquals((await call(one, "GET", "/v1/acl/token/self", { token: secret })).status, 200);
    const replay = await put(one, "/v1/acl/oidc/complete-auth", first);
    assertEquals([replay.status, replay.text], [400, noRequest]);

    // Started on node two, the callback handed to both nodes at once: one token, one refusal.
    const second = await begin(two, "nonce-both-nodes-0123456789");
    const answers = await Promise.all([one, two].map((u) => put(u, "/v1/acl/oidc/complete-auth", second)));
    const seen = JSON.stringify(answers.map((a) => [a.status, a.text.slice(0, 80)]));
    assertEquals(answers.filter((a) => a.status === 200).length, 1, seen);
    const refused = answers.find((a) => a.status !== 200)!;
    assert(refused.status === 400 && refused.text === noRequest, seen);
  },
);
