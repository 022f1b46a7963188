// `PUT /v1/acl/login` with JWTs signed by keys the test makes: Nomad's refusals (audience, issuer, signature,
// exp, nbf, no matching rule), selectors over list claims, bind types policy, role and management, MaxTokenTTL, a
// JWKS URL and a discovery document, and the login token's event (docs/events.md#sso-login).

import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { assert, assertEquals } from "../helpers/assert.ts";
import { call, putPolicy, rootSecret, startEventsServer, subscribe } from "./stream_helpers.ts";

type Key = CryptoKey;

function sign(key: Key, claims: Record<string, unknown>, kid = "k1"): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: "https://ci.example", aud: "wharf", iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: "RS256", kid })
    .sign(key);
}

Deno.test("acl login with a JWT: refusals, list-claim selectors, policy, role and management bindings, MaxTokenTTL", async () => {
  const srv = await startEventsServer();
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const other = await generateKeyPair("RS256");
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" }] };
  // Serves the JWKS, and a discovery document naming it (its issuer is this server's address).
  const jwksServer = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (req) => {
    const origin = new URL(req.url).origin;
    if (new URL(req.url).pathname !== "/.well-known/openid-configuration") return Response.json(jwks);
    return Response.json({ issuer: origin, jwks_uri: `${origin}/jwks` });
  });
  try {
    const put = (path: string, body: unknown) => call(srv.url, "PUT", path, { body, token: rootSecret });
    const config = {
      BoundAudiences: ["wharf"],
      BoundIssuer: ["https://ci.example"],
      ClaimMappings: { project: "project", "/nested/team": "team" },
      ListClaimMappings: { groups: "groups" },
    };
    const created = await put("/v1/acl/auth-method", {
      Name: "ci",
      Type: "JWT",
      TokenLocality: "local",
      MaxTokenTTL: "30m",
      TokenNameFormat: "${auth_method_name}-${value.project}",
      Config: { ...config, JWTValidationPubKeys: [await exportSPKI(publicKey)] },
    });
    assertEquals(created.status, 200, created.text);
    await putPolicy(srv.url, "deploy-web", 'namespace "default" { policy = "read" }');
    const ruleIds: string[] = [];
    for (
      const rule of [
        { BindType: "policy", BindName: "deploy-${value.project}", Selector: '"deployers" in list.groups' },
        { BindType: "management", Selector: 'value.team == "platform"' },
        { BindType: "policy", BindName: "missing-policy" },
        { BindType: "role", BindName: "${value.project}-release", Selector: '"releasers" in list.groups' },
      ]
    ) {
      const r = await put("/v1/acl/binding-rule", { AuthMethod: "ci", ...rule });
      assertEquals(r.status, 200, r.text);
      ruleIds.push(String((r.json as Record<string, unknown>).ID));
    }
    const login = (token: string, method = "ci") =>
      call(srv.url, "PUT", "/v1/acl/login", { body: { AuthMethodName: method, LoginToken: token } });
    const events = await subscribe(srv.url, "topic=ACLToken&index=-1");

    // A deployer of project "web" gets the policy its rule names, a token of the method's MaxTokenTTL.
    const before = Date.now();
    const ok = await login(await sign(privateKey, { project: "WEB", groups: ["deployers", "devs"] }));
    assertEquals(ok.status, 200, ok.text);
    const t = ok.json as Record<string, unknown>;
    assertEquals([t.Type, t.Policies, t.Name, t.ExpirationTTL, t.Global], [
      "client",
      ["deploy-web"],
      "ci-WEB",
      "30m0s",
      false,
    ]);
    const expires = Date.parse(String(t.ExpirationTime));
    assert(expires >= before + 30 * 60_000 && expires <= Date.now() + 30 * 60_000, String(t.ExpirationTime));
    const self = await call(srv.url, "GET", "/v1/acl/token/self", { token: String(t.SecretID) });
    assertEquals([self.status, (self.json as Record<string, unknown>).AccessorID], [200, t.AccessorID]);
    const seen = (await events.dataUntilQuiet(300)).flatMap((f) => f.Events ?? []);
    assertEquals(seen.map((e) => `${e.Type} ${e.Key}`), [`ACLTokenUpserted ${t.AccessorID}`]);
    assert(!JSON.stringify(seen).includes(String(t.SecretID)));
    await events.close();

    // A role binding (the bind name lowercased, as Nomad's binder does) links the role by its ID.
    const role = await put("/v1/acl/role", { Name: "web-release", Policies: [{ Name: "deploy-web" }] });
    assertEquals(role.status, 200, role.text);
    const releaser = await login(await sign(privateKey, { project: "Web", groups: ["releasers"] }));
    const rt = releaser.json as Record<string, unknown>;
    assertEquals([releaser.status, rt.Type, rt.Policies, rt.Roles], [200, "client", null, [{
      ID: (role.json as Record<string, unknown>).ID,
      Name: "web-release",
    }]]);

    // A nested claim by JSON pointer binds management.
    const admin = await login(await sign(privateKey, { project: "x", nested: { team: "platform" } }));
    assertEquals([admin.status, (admin.json as Record<string, unknown>).Type], [200, "management"]);

    // Not in the list claim, and the catch-all rule names a policy that does not exist: nothing matched.
    const none = await login(await sign(privateKey, { project: "web", groups: ["devs"] }));
    assertEquals([none.status, none.text], [400, "no role or policy bindings matched"]);

    // A rule's changed selector decides the next login (selectors are parsed once per rule version); the
    // update names only the selector (Nomad's merge keeps the rest).
    const reselect = async (selector: string) => {
      const r = await put(`/v1/acl/binding-rule/${ruleIds[0]}`, { Selector: selector });
      assertEquals(r.status, 200, r.text);
    };
    await reselect('"devs" in list.groups');
    const dev = await login(await sign(privateKey, { project: "web", groups: ["devs"] }));
    assertEquals([dev.status, (dev.json as Record<string, unknown>).Policies], [200, ["deploy-web"]]);
    await reselect('"deployers" in list.groups');

    const refused = async (claims: Record<string, unknown>, key: Key = privateKey) => {
      const r = await login(await sign(key, { project: "web", groups: ["deployers"], ...claims }));
      return [r.status, r.text];
    };
    const prefix = "unable to validate provided token: unable to verify signature of JWT token: ";
    assertEquals(await refused({ aud: "someone-else" }), [
      401,
      `${prefix}invalid audience (aud) claim: audience claim does not match any expected audience`,
    ]);
    assertEquals(await refused({ iss: "https://evil.example" }), [
      401,
      "unable to validate provided token: invalid JWT issuer: https://evil.example",
    ]);
    const wrongKey = await refused({}, other.privateKey);
    assertEquals(wrongKey[0], 401);
    assert(String(wrongKey[1]).startsWith(`${prefix}error verifying token signature: `), String(wrongKey[1]));
    const past = Math.floor(Date.now() / 1000) - 3600;
    assertEquals(await refused({ iat: past - 60, exp: past }), [
      401,
      `${prefix}invalid expiration time (exp) claim: token is expired`,
    ]);
    const future = Math.floor(Date.now() / 1000) + 3600;
    assertEquals(await refused({ nbf: future, exp: future + 60, iat: undefined }), [
      401,
      `${prefix}invalid not before (nbf) claim: token not yet valid`,
    ]);
    assertEquals((await login("not.a.jwt")).status, 401);
    const unknown = await login(await sign(privateKey, {}), "nope");
    assertEquals([unknown.status, unknown.text], [400, 'auth-method "nope" not found']);
    const empty = await call(srv.url, "PUT", "/v1/acl/login", { body: {} });
    assertEquals(
      empty.text,
      "invalid login request: 2 errors occurred:\n\t* missing auth method name\n\t* missing login token\n\n",
    );

    // The same through a JWKS URL.
    const viaJwks = await put("/v1/acl/auth-method", {
      Name: "ci-jwks",
      Type: "JWT",
      TokenLocality: "global",
      MaxTokenTTL: "2m",
      Config: { ...config, JWKSURL: `http://127.0.0.1:${jwksServer.addr.port}/jwks` },
    });
    assertEquals(viaJwks.status, 200, viaJwks.text);
    await put("/v1/acl/binding-rule", { AuthMethod: "ci-jwks", BindType: "management" });
    const j = await login(await sign(privateKey, {}), "ci-jwks");
    const jt = j.json as Record<string, unknown>;
    assertEquals([j.status, jt.Type, jt.Global, jt.ExpirationTTL, jt.Name], [
      200,
      "management",
      true,
      "2m0s",
      "JWT-ci-jwks",
    ]);
    assertEquals((await login(await sign(other.privateKey, {}, "k2"), "ci-jwks")).status, 401);

    // The same through the OIDC discovery document.
    const viaDiscovery = await put("/v1/acl/auth-method", {
      Name: "ci-discovery",
      Type: "JWT",
      TokenLocality: "local",
      MaxTokenTTL: "5m",
      Config: { ...config, OIDCDiscoveryURL: `http://127.0.0.1:${jwksServer.addr.port}` },
    });
    assertEquals(viaDiscovery.status, 200, viaDiscovery.text);
    await put("/v1/acl/binding-rule", {
      AuthMethod: "ci-discovery",
      BindType: "policy",
      BindName: "deploy-web",
    });
    const d = await login(await sign(privateKey, {}), "ci-discovery");
    assertEquals([d.status, (d.json as Record<string, unknown>).Policies], [200, ["deploy-web"]]);
    assertEquals((await login(await sign(other.privateKey, {}), "ci-discovery")).status, 401);
  } finally {
    await jwksServer.shutdown();
    await srv.stop();
  }
});
