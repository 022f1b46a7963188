// ACL auth methods and binding rules over HTTP: Nomad's validation errors, the merge on update, the redacted
// client secret, who may read what, and their events on the ACL topics (docs/events.md#sso-login).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { call, createToken, putPolicy, rootSecret, startEventsServer, subscribe } from "./stream_helpers.ts";

/** The values of `names` in `o`, in that order. */
const pick = (o: Record<string, unknown>, ...names: string[]) => names.map((n) => o[n]);

const jwtMethod = {
  Name: "ci",
  Type: "JWT",
  TokenLocality: "local",
  MaxTokenTTL: "1h",
  Config: { JWTValidationPubKeys: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"] },
};

Deno.test("acl auth methods and binding rules: validation, merge, redaction, ACL checks and events", async () => {
  const srv = await startEventsServer();
  try {
    const events = await subscribe(srv.url, "topic=ACLAuthMethod&topic=ACLBindingRule&index=-1");
    const put = (path: string, body: unknown, token: string | null = rootSecret) =>
      call(srv.url, "PUT", path, { body, token: token ?? undefined });

    // Nomad's validation, every reason at once.
    const bad = await put("/v1/acl/auth-method", { Name: "bad name!", Type: "LDAP", TokenLocality: "x" });
    assertEquals([bad.status, bad.text], [
      400,
      "auth method 0 invalid: 5 errors occurred:\n\t* invalid name 'bad name!'\n\t* invalid token locality 'x'\n" +
      "\t* invalid token type 'LDAP'\n\t* invalid config: missing auth method Config\n" +
      "\t* invalid MaxTokenTTL value '0s' (should be between 1m0s and 24h0m0s)\n\n",
    ]);
    const noKeys = await put("/v1/acl/auth-method", { ...jwtMethod, Config: {} });
    assertEquals(
      noKeys.text,
      "auth method 0 invalid: 1 error occurred:\n\t* invalid config: " +
        "JWT auth method requires either OIDCDiscoveryURL, or JWKS URL, or JWTValidationPubKeys set\n\n",
    );
    const oidcMissing = await put("/v1/acl/auth-method", { ...jwtMethod, Type: "OIDC", Config: {} });
    assertEquals(
      oidcMissing.text,
      "auth method 0 invalid: 1 error occurred:\n\t* invalid config: " +
        "2 errors occurred:\n\t* missing OIDCDiscoveryURL\n\t* missing OIDCClientID\n\n\n\n",
    );
    const badTtl = await put("/v1/acl/auth-method", { ...jwtMethod, MaxTokenTTL: "soon" });
    assertEquals([badTtl.status, badTtl.text], [
      400,
      'Failed to decode request body: time: invalid duration "soon"',
    ]);

    const proto = await put("/v1/acl/auth-method", {
      ...jwtMethod,
      Config: { ...jwtMethod.Config, ClaimMappings: JSON.parse('{"__proto__": "x"}') },
    });
    assertEquals([proto.status, proto.text], [400, 'ClaimMappings cannot map "__proto__"']);
    const hostile = await put("/v1/acl/auth-method", { ...jwtMethod, Config: { ClaimMappings: { a: 1 } } });
    assertEquals(
      hostile.text,
      "Failed to decode request body: json: cannot unmarshal number into Go struct field ACLAuthMethodConfig.ClaimMappings of type string",
    );

    // Management only for writes and reads of one method; anyone lists.
    await putPolicy(srv.url, "reader", 'node { policy = "read" }');
    const client = (await createToken(srv.url, ["reader"])).SecretID;
    assertEquals((await put("/v1/acl/auth-method", jwtMethod, client)).status, 403);
    assertEquals((await put("/v1/acl/auth-method", jwtMethod, null)).status, 403);

    const created = await put("/v1/acl/auth-method", jwtMethod);
    assertEquals(created.status, 200);
    const m = created.json as Record<string, unknown>;
    const defaultFormat = "${auth_method_type}-${auth_method_name}";
    assertEquals(pick(m, "Name", "Type", "MaxTokenTTL", "TokenNameFormat", "Default"), [
      "ci",
      "JWT",
      "1h0m0s",
      defaultFormat,
      false,
    ]);
    assertEquals(created.headers.get("X-Nomad-Index"), String(m.ModifyIndex));
    assertEquals((await call(srv.url, "GET", "/v1/acl/auth-method/ci", { token: client })).status, 403);
    const listed = await call(srv.url, "GET", "/v1/acl/auth-methods");
    assertEquals(listed.status, 200);
    assertEquals((listed.json as Array<Record<string, unknown>>).map((s) => [s.Name, s.Type, s.Hash]), [
      ["ci", "JWT", m.Hash],
    ]);

    // An OIDC method: the secret is sealed and answered "redacted"; an update without Config keeps it.
    const oidc = await put("/v1/acl/auth-method", {
      Name: "corp",
      Type: "OIDC",
      TokenLocality: "global",
      MaxTokenTTL: 600e9,
      Default: true,
      Config: {
        OIDCDiscoveryURL: "https://idp.example",
        OIDCClientID: "wharf",
        OIDCClientSecret: "s3cret-value",
        AllowedRedirectURIs: ["http://localhost:4649/oidc/callback"],
        ClaimMappings: { email: "email" },
        ExpirationLeeway: "30s",
      },
    });
    assertEquals(oidc.status, 200, oidc.text);
    assert(!oidc.text.includes("s3cret-value"));
    const oc = (oidc.json as { Config: Record<string, unknown> }).Config;
    assertEquals([oc.OIDCClientSecret, oc.ExpirationLeeway, oc.NotBeforeLeeway], ["redacted", "30s", ""]);
    const second = await put("/v1/acl/auth-method", { ...jwtMethod, Name: "other", Default: true });
    assertEquals([second.status, second.text], [400, "default method already exists: corp"]);
    const renamed = await put("/v1/acl/auth-method/corp", { Name: "x" });
    assertEquals([renamed.status, renamed.text], [400, "ACL auth-method name does not match request path"]);
    const merged = await call(srv.url, "POST", "/v1/acl/auth-method/corp", {
      token: rootSecret,
      body: { Name: "corp", TokenNameFormat: "${value.email}", Default: true },
    });
    const mm = merged.json as Record<string, unknown> & { Config: Record<string, unknown> };
    assertEquals([merged.status, mm.Type, mm.MaxTokenTTL, mm.TokenNameFormat, mm.Config.OIDCClientSecret], [
      200,
      "OIDC",
      "10m0s",
      "${value.email}",
      "redacted",
    ]);
    const got = await call(srv.url, "GET", "/v1/acl/auth-method/corp", { token: rootSecret });
    assertEquals((got.json as Record<string, unknown>).ModifyIndex, mm.ModifyIndex);
    assertEquals((await call(srv.url, "GET", "/v1/acl/auth-method/nope", { token: rootSecret })).status, 404);

    // Binding rules.
    const noMethod = await put("/v1/acl/binding-rule", { AuthMethod: "nope", BindType: "management" });
    assertEquals([noMethod.status, noMethod.text], [400, "ACL auth method nope not found"]);
    const invalid = await put("/v1/acl/binding-rule", {
      AuthMethod: "ci",
      BindType: "management",
      BindName: "x",
      Selector: "value.a ==",
    });
    assertEquals(invalid.status, 400);
    assertMatch(
      invalid.text,
      /^binding rule 0 invalid: 2 errors occurred:\n\t\* bind name should be empty\n\t\* selector is invalid: /,
    );
    const typeless = await put("/v1/acl/binding-rule", { AuthMethod: "ci", BindType: "group" });
    assertEquals(
      typeless.text,
      'binding rule 0 invalid: 1 error occurred:\n\t* unsupported bind type: "group"\n\n',
    );
    const rule = await put("/v1/acl/binding-rule", {
      AuthMethod: "ci",
      BindType: "policy",
      BindName: "${value.project}-deploy",
      Selector: '"ops" in list.groups',
      Description: "deployers",
    });
    assertEquals(rule.status, 200, rule.text);
    const r = rule.json as Record<string, unknown>;
    assertMatch(String(r.ID), /^[0-9a-f-]{36}$/);
    const moved = await put(`/v1/acl/binding-rule/${r.ID}`, { AuthMethod: "corp" });
    assertEquals(moved.text, "cannot update auth method for binding rule, create a new rule instead");
    const unknown = await put("/v1/acl/binding-rule/00000000-0000-0000-0000-000000000000", {
      AuthMethod: "ci",
    });
    assertEquals(unknown.text, "cannot find binding rule 00000000-0000-0000-0000-000000000000");
    const updated = await put(`/v1/acl/binding-rule/${r.ID}`, { Description: "changed" });
    const u = updated.json as Record<string, unknown>;
    const kept = ["policy", "${value.project}-deploy"];
    assertEquals(pick(u, "BindType", "BindName", "Selector", "Description", "CreateIndex"), [
      ...kept,
      "",
      "changed",
      r.CreateIndex,
    ]);
    assertEquals((await call(srv.url, "GET", "/v1/acl/binding-rules", { token: client })).status, 403);
    const rules = await call(srv.url, "GET", "/v1/acl/binding-rules", { token: rootSecret });
    assertEquals((rules.json as Array<Record<string, unknown>>).map((x) => [x.ID, x.AuthMethod]), [[
      r.ID,
      "ci",
    ]]);
    const del = await call(srv.url, "DELETE", `/v1/acl/binding-rule/${r.ID}`, { token: rootSecret });
    assertEquals(del.status, 200);
    const again = await call(srv.url, "DELETE", `/v1/acl/binding-rule/${r.ID}`, { token: rootSecret });
    assertEquals([again.status, again.text], [400, "ACL binding rule not found"]);
    assertEquals(
      (await call(srv.url, "DELETE", "/v1/acl/auth-method/corp", { token: rootSecret })).status,
      200,
    );
    const gone = await call(srv.url, "DELETE", "/v1/acl/auth-method/corp", { token: rootSecret });
    assertEquals([gone.status, gone.text], [400, "ACL auth method not found"]);

    const seen = (await events.dataUntilQuiet(500)).flatMap((f) => f.Events ?? []);
    assertEquals(seen.map((e) => `${e.Type} ${e.Key}`), [
      "ACLAuthMethodUpserted ci",
      "ACLAuthMethodUpserted corp",
      "ACLAuthMethodUpserted corp",
      `ACLBindingRuleUpserted ${r.ID}`,
      `ACLBindingRuleUpserted ${r.ID}`,
      `ACLBindingRuleDeleted ${r.ID}`,
      "ACLAuthMethodDeleted corp",
    ]);
    assert(!JSON.stringify(seen).includes("s3cret-value"));
    await events.close();
  } finally {
    await srv.stop();
  }
});
