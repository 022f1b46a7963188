// Integration tests of auth-method create and its validation rules.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { fieldNames, minimalLdapAttrs, minimalOidcAttrs, withAuthServer } from "./helpers.ts";
import { loggedLines } from "../helpers/stored.ts";

Deno.test("auth method create returns 200 with Boundary ids, version 1 and an inactive OIDC state", () =>
  withAuthServer(async (f) => {
    for (
      const [type, attributes, prefix] of [
        ["password", undefined, "ampw"],
        ["oidc", minimalOidcAttrs, "amoidc"],
        ["ldap", minimalLdapAttrs, "amldap"],
      ] as const
    ) {
      const r = await f.admin.post("/v1/auth-methods", { scope_id: "global", type, attributes, version: 0 });
      assertEquals(r.status, 200, JSON.stringify(r.body));
      assertMatch(r.body.id, new RegExp(`^${prefix}_[0-9A-Za-z]{10}$`));
      assertEquals(r.body.version, 1);
      assertEquals(r.body.type, type);
      assertEquals(r.body.scope, {
        id: "global",
        type: "global",
        name: "global",
        description: "Global Scope",
      });
      if (type === "password") {
        assertEquals(r.body.attributes, { min_login_name_length: 3, min_password_length: 8 });
      }
      if (type === "oidc") {
        assertEquals(r.body.attributes.state, "inactive");
        assertEquals(r.body.attributes.api_url_prefix, "https://wharf.example.com");
        assertEquals(
          r.body.attributes.callback_url,
          "https://wharf.example.com/v1/auth-methods/oidc:authenticate:callback",
        );
        assert(!("client_secret" in r.body.attributes));
        assertMatch(r.body.attributes.client_secret_hmac, /^[A-Za-z0-9_-]{43}$/);
        assert(r.body.authorized_actions.includes("change-state"));
      }
      if (type === "ldap") {
        assertEquals(r.body.attributes, { state: "inactive", urls: minimalLdapAttrs.urls });
      }
      const read = await f.admin.get(`/v1/auth-methods/${r.body.id}`);
      assertEquals(read.body, r.body);
    }
  }));

Deno.test("auth method create rejects missing secrets, read-only fields, bad scopes and duplicate names", () =>
  withAuthServer(async (f) => {
    const create = (body: Record<string, unknown>) =>
      f.admin.post("/v1/auth-methods", { scope_id: "global", ...body });
    const noSecret = await create({
      type: "oidc",
      attributes: { client_id: "c", api_url_prefix: "https://x.example" },
    });
    assertEquals(noSecret.status, 400);
    assertEquals(noSecret.body.kind, "InvalidArgument");
    assertEquals(fieldNames(noSecret.body), ["attributes.client_secret"]);
    const withState = await create({
      type: "oidc",
      attributes: { ...minimalOidcAttrs, state: "active-public" },
    });
    assertEquals(withState.body.details.request_fields, [{
      name: "attributes.state",
      description: "Field is read only.",
    }]);
    const withFlag = await create({
      type: "oidc",
      attributes: { ...minimalOidcAttrs, disable_discovered_config_validation: true },
    });
    assertEquals(withFlag.body.details.request_fields, [{
      name: "attributes.disable_discovered_config_validation",
      description: "Field is not allowed at create time.",
    }]);
    assertEquals(fieldNames((await create({ type: "oidc" })).body), ["attributes"]);
    const badScope = await f.admin.post("/v1/auth-methods", { scope_id: "p_1234567890", type: "password" });
    assertEquals(badScope.status, 400);
    assertEquals(badScope.body.details.request_fields, [{
      name: "scope_id",
      description: "This field must be 'global' or a valid org scope id.",
    }]);
    const unknownOrg = await f.admin.post("/v1/auth-methods", { scope_id: "o_1234567890", type: "password" });
    assertEquals(unknownOrg.status, 404);
    assertEquals(unknownOrg.body, { kind: "NotFound", message: "Resource not found." });
    assertEquals((await create({ type: "password", name: "dup" })).status, 200);
    const dup = await create({ type: "ldap", attributes: minimalLdapAttrs, name: "dup" });
    assertEquals(dup.status, 400);
    assertEquals(fieldNames(dup.body), ["name"]);
    const ro = await create({ type: "password", id: "ampw_1234567890", created_time: "x", is_primary: true });
    assertEquals(fieldNames(ro.body), ["created_time", "id", "is_primary"]);
    assertEquals(ro.body.details.request_fields[0].description, "This field is read only.");
    assertEquals(fieldNames((await create({ type: "password", version: 3 })).body), ["version"]);
    assertEquals(fieldNames((await create({ type: "kerberos" })).body), ["type"]);
    assertEquals(fieldNames((await create({ type: "password", name: "  " })).body), ["name"]);
    assertEquals(
      (await create({ type: "password", name: "  " })).body.details.request_fields[0].description,
      "Cannot set empty string as name",
    );
    assertEquals(fieldNames((await create({ type: "password", description: "" })).body), ["description"]);
    const other = await create({ type: "password", attributes: { urls: ["ldap://x"] } });
    assertEquals(other.body.details.request_fields, [{
      name: "attributes.urls",
      description: "Unknown field.",
    }]);
    const trimmed = await create({ type: "password", name: "  spaced  ", unknown_top_level: 1 });
    assertEquals(trimmed.body.name, "spaced");
  }));

Deno.test("auth method bad input gives 400 in Boundary's error shape, never 5xx", () =>
  withAuthServer(async (f) => {
    const bodies: unknown[] = [
      "{not json",
      "[]",
      "42",
      '"text"',
      { scope_id: 7, type: "password" },
      { scope_id: "global", type: ["password"] },
      { scope_id: "global", type: "password", name: 5 },
      { scope_id: "global", type: "password", attributes: "x" },
      { scope_id: "global", type: "password", attributes: { min_password_length: -1 } },
      { scope_id: "global", type: "password", attributes: { min_password_length: 1.5 } },
      { scope_id: "global", type: "password", attributes: { min_password_length: "eight" } },
      { scope_id: "global", type: "password", name: "x".repeat(100_000) },
      { scope_id: "global", type: "password", name: "bad\u0000name" },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, issuer: "ftp://x" } },
      {
        scope_id: "global",
        type: "oidc",
        attributes: { ...minimalOidcAttrs, signing_algorithms: ["HS256"] },
      },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, prompts: ["none", "login"] } },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, claims_scopes: ["openid"] } },
      {
        scope_id: "global",
        type: "oidc",
        attributes: { ...minimalOidcAttrs, account_claim_maps: ["oid=uid"] },
      },
      {
        scope_id: "global",
        type: "oidc",
        attributes: { ...minimalOidcAttrs, account_claim_maps: ["a=sub", "b=sub"] },
      },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, idp_ca_certs: ["not a pem"] } },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, max_age: -5 } },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, client_id: null } },
      { scope_id: "global", type: "oidc", attributes: { ...minimalOidcAttrs, api_url_prefix: "" } },
      { scope_id: "global", type: "ldap", attributes: { urls: [] } },
      { scope_id: "global", type: "ldap", attributes: { urls: ["http://x"] } },
      { scope_id: "global", type: "ldap", attributes: { urls: ["ldap://x:99999"] } },
      { scope_id: "global", type: "ldap", attributes: { urls: ["ldap://cn=admin:s3cret@ldap.example.org"] } },
      { scope_id: "global", type: "ldap", attributes: { ...minimalLdapAttrs, state: "on" } },
      { scope_id: "global", type: "ldap", attributes: { ...minimalLdapAttrs, start_tls: "yes" } },
      {
        scope_id: "global",
        type: "ldap",
        attributes: {
          ...minimalLdapAttrs,
          certificates: ["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"],
        },
      },
      { scope_id: "global", type: "ldap", attributes: { ...minimalLdapAttrs, client_certificate_key: "x" } },
      {
        scope_id: "global",
        type: "ldap",
        attributes: { ...minimalLdapAttrs, account_attribute_maps: ["a=email", "b=EMAIL"] },
      },
      {
        scope_id: "global",
        type: "ldap",
        attributes: { ...minimalLdapAttrs, dereference_aliases: "sometimes" },
      },
      { scope_id: "global", type: "ldap", attributes: { ...minimalLdapAttrs, maximum_page_size: 1e12 } },
      { scope_id: "global", type: "ldap", attributes: { ...minimalLdapAttrs, bind_dn: { dn: "x" } } },
    ];
    for (const body of bodies) {
      const r = await f.admin.call("POST", "/v1/auth-methods", body);
      assertEquals(
        r.status,
        400,
        `${JSON.stringify(body).slice(0, 200)} → ${r.status} ${JSON.stringify(r.body)}`,
      );
      assert(typeof r.body.kind === "string" && typeof r.body.message === "string");
      assert(!("status" in r.body));
    }
    const ldapState = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: { ...minimalLdapAttrs, state: "on" },
    });
    assertEquals(
      ldapState.body.details.request_fields[0].description,
      'Only supported values are "inactive", "active-private", or "active-public".',
    );
    const alg = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { ...minimalOidcAttrs, signing_algorithms: ["HS256"] },
    });
    assertEquals(alg.body.details.request_fields[0].description, 'Contains unsupported algorithm "HS256"');
    const big = await f.admin.call("POST", "/v1/auth-methods", "x".repeat(2 * 1024 * 1024));
    assertEquals(big.status, 400);
  }));

Deno.test("auth method attributes are normalized and zero values omitted except client_id and max_age", () =>
  withAuthServer(async (f) => {
    const r = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: {
        ...minimalOidcAttrs,
        issuer: "HTTPS://IdP.Example.com/tenant/.well-known/openid-configuration",
        max_age: 0,
        allowed_audiences: [],
      },
    });
    assertEquals(r.body.attributes.issuer, "https://idp.example.com/tenant");
    assertEquals(r.body.attributes.max_age, 0);
    assert(!("allowed_audiences" in r.body.attributes));
    assert(!("description" in r.body) && !("name" in r.body) && !("is_primary" in r.body));
    const cleared = await f.admin.patch(`/v1/auth-methods/${r.body.id}`, {
      version: 1,
      attributes: { client_id: null },
    });
    assertEquals(cleared.body.details.request_fields, [{
      name: "attributes.client_id",
      description: "Can change but cannot unset this field.",
    }]);
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: {
        ...minimalLdapAttrs,
        start_tls: false,
        insecure_tls: true,
        dereference_aliases: "finding",
        maximum_page_size: 0,
      },
    });
    assertEquals(ldap.body.attributes, {
      state: "inactive",
      urls: minimalLdapAttrs.urls,
      insecure_tls: true,
      dereference_aliases: "DerefFindingBaseObj",
    });
  }));

Deno.test("auth method secrets never appear and their HMACs change with the secret", () =>
  withAuthServer(async (f) => {
    const secret = "super-secret-value-42";
    const r = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { ...minimalOidcAttrs, client_secret: secret },
    });
    const hmac1 = r.body.attributes.client_secret_hmac;
    const same = await f.admin.patch(`/v1/auth-methods/${r.body.id}`, {
      version: 1,
      attributes: { client_secret: secret },
    });
    assertEquals(same.body.attributes.client_secret_hmac, hmac1);
    const changed = await f.admin.patch(`/v1/auth-methods/${r.body.id}`, {
      version: 2,
      attributes: { client_secret: "other-secret" },
    });
    assert(changed.body.attributes.client_secret_hmac !== hmac1);
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: { ...minimalLdapAttrs, bind_dn: "cn=admin", bind_password: secret },
    });
    assertMatch(ldap.body.attributes.bind_password_hmac, /^[A-Za-z0-9_-]{43}$/);
    const list = await f.admin.get("/v1/auth-methods?scope_id=global");
    assert(!JSON.stringify(list.body).includes(secret));
    assert(!JSON.stringify([r.body, same.body, changed.body, ldap.body]).includes(secret));
    const events = (await loggedLines(f.server)).join("\n");
    assert(events.includes(r.body.id), "the log holds the method");
    assert(!events.includes(secret), "the log holds only the sealed secret");
    const ro = await f.admin.patch(`/v1/auth-methods/${r.body.id}`, {
      version: 3,
      attributes: { client_secret_hmac: "x" },
    });
    assertEquals(ro.body.details.request_fields, [{
      name: "attributes.client_secret_hmac",
      description: "Field is read only.",
    }]);
  }));
