// Integration tests of auth-method reads, PATCH, delete and change-state, and their validation rules.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { fieldNames, makeUser, minimalLdapAttrs, minimalOidcAttrs, withAuthServer } from "./helpers.ts";

Deno.test("auth method ids are checked: malformed 400, absent 404, callers 401/403", () =>
  withAuthServer(async (f) => {
    const bad = await f.admin.get("/v1/auth-methods/ampw_bad-id");
    assertEquals(bad.status, 400);
    assertEquals(bad.body.details.request_fields, [{
      name: "id",
      description: "Incorrectly formatted identifier.",
    }]);
    assertEquals((await f.admin.get("/v1/auth-methods/xx_1234567890")).status, 400);
    assertEquals((await f.admin.get("/v1/auth-methods/ampw_1234567890")).status, 404);
    assertEquals((await f.admin.delete("/v1/auth-methods/amldap_1234567890")).status, 404);
    const anon = await f.anon.get(`/v1/auth-methods/${f.primaryMethodId}`);
    assertEquals(anon.status, 401);
    assertEquals(anon.body, { kind: "Unauthenticated", message: "Unauthenticated, or invalid token." });
    const { client: user } = await makeUser(f, "alice");
    const forbidden = await user.get(`/v1/auth-methods/${f.primaryMethodId}`);
    assertEquals(forbidden.status, 403);
    assertEquals(forbidden.body, { kind: "PermissionDenied", message: "Forbidden." });
    assertEquals((await user.post("/v1/auth-methods", { scope_id: "global", type: "password" })).status, 403);
    assertEquals(
      (await f.anon.post("/v1/auth-methods", { scope_id: "global", type: "password" })).status,
      401,
    );
    assertEquals(
      (await user.patch(`/v1/auth-methods/${f.primaryMethodId}`, { version: 1, name: "x" })).status,
      403,
    );
    assertEquals((await user.delete(`/v1/auth-methods/${f.primaryMethodId}`)).status, 403);
    const unknownRoute = await f.admin.get("/v1/auth-methods/ampw_1234567890/extra");
    assertEquals(unknownRoute.status, 404);
    const wrongMethod = await f.admin.call("PUT", `/v1/auth-methods/${f.primaryMethodId}`, {});
    assertEquals(wrongMethod.status, 405);
    assertEquals(wrongMethod.body.kind, "Unimplemented");
  }));

Deno.test("auth method PATCH changes only sent fields, null clears, lists are replaced, version grows", () =>
  withAuthServer(async (f) => {
    const c = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      name: "dir",
      description: "the directory",
      attributes: { urls: ["ldap://a.example", "ldap://b.example"], user_dn: "ou=people", start_tls: true },
    });
    const id = c.body.id;
    const p1 = await f.admin.patch(`/v1/auth-methods/${id}`, {
      version: 1,
      attributes: { urls: ["ldaps://c.example:636"] },
    });
    assertEquals(p1.status, 200, JSON.stringify(p1.body));
    assertEquals(p1.body.version, 2);
    assertEquals(p1.body.attributes.urls, ["ldaps://c.example:636"]);
    assertEquals(p1.body.attributes.user_dn, "ou=people");
    assertEquals(p1.body.name, "dir");
    assert(p1.body.updated_time > c.body.updated_time);
    assertEquals(p1.body.created_time, c.body.created_time);
    const p2 = await f.admin.patch(`/v1/auth-methods/${id}`, {
      version: 2,
      description: null,
      attributes: { start_tls: null, user_dn: null },
    });
    assertEquals(p2.body.version, 3);
    assert(!("description" in p2.body));
    assertEquals(p2.body.attributes, { state: "inactive", urls: ["ldaps://c.example:636"] });
    const urls = await f.admin.patch(`/v1/auth-methods/${id}`, { version: 3, attributes: { urls: null } });
    assertEquals(fieldNames(urls.body), ["attributes.urls"]);
    const masked = await f.admin.call("PATCH", `/v1/auth-methods/${id}?update_mask=name`, {
      version: 3,
      name: "renamed",
      description: "ignored",
    });
    assertEquals(masked.body.name, "renamed");
    assert(!("description" in masked.body));
    const badMask = await f.admin.call("PATCH", `/v1/auth-methods/${id}?update_mask=nope`, {
      version: 4,
      name: "x",
    });
    assertEquals(badMask.body.details.request_fields, [{
      name: "update_mask",
      description: "Invalid update mask provided.",
    }]);
    const empty = await f.admin.patch(`/v1/auth-methods/${id}`, { version: 4 });
    assertEquals(empty.body.details.request_fields, [{
      name: "update_mask",
      description: "No valid fields included in the update mask.",
    }]);
    const pw = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "password",
      attributes: { min_password_length: 12 },
    });
    const reset = await f.admin.patch(`/v1/auth-methods/${pw.body.id}`, {
      version: 1,
      attributes: { min_password_length: null, min_login_name_length: 5 },
    });
    assertEquals(reset.body.attributes, { min_login_name_length: 5, min_password_length: 8 });
  }));

Deno.test("auth method PATCH rejects other types, unknown keys, read-only fields and stale versions", () =>
  withAuthServer(async (f) => {
    const ids: Record<string, string> = {};
    for (
      const [type, attributes] of [["password", {}], ["oidc", minimalOidcAttrs], [
        "ldap",
        minimalLdapAttrs,
      ]] as const
    ) {
      ids[type] = (await f.admin.post("/v1/auth-methods", { scope_id: "global", type, attributes })).body.id;
    }
    const id = ids.password!;
    const typeChange = await f.admin.patch(`/v1/auth-methods/${id}`, { version: 1, type: "ldap" });
    assertEquals(typeChange.body.details.request_fields, [{
      name: "type",
      description: "Cannot modify the resource type.",
    }]);
    assertEquals(
      (await f.admin.patch(`/v1/auth-methods/${id}`, { version: 1, type: "password", name: "same-type" }))
        .status,
      200,
    );
    assertEquals(fieldNames((await f.admin.patch(`/v1/auth-methods/${id}`, { version: 2, bogus: 1 })).body), [
      "bogus",
    ]);
    assertEquals(
      fieldNames(
        (await f.admin.patch(`/v1/auth-methods/${id}`, { version: 2, attributes: { bogus: 1 } })).body,
      ),
      ["attributes.bogus"],
    );
    assertEquals(
      fieldNames((await f.admin.patch(`/v1/auth-methods/${id}`, { version: 2, created_time: "x" })).body),
      ["created_time"],
    );
    const org = await f.admin.post("/v1/scopes", { scope_id: "global", name: "org-a" });
    assertEquals(
      fieldNames((await f.admin.patch(`/v1/auth-methods/${id}`, { version: 2, scope_id: org.body.id })).body),
      ["scope_id"],
    );
    const noVersion = await f.admin.patch(`/v1/auth-methods/${id}`, { name: "x" });
    assertEquals(noVersion.status, 400);
    assertEquals(noVersion.body.details.request_fields, [{
      name: "version",
      description: "Existing resource version is required for an update.",
    }]);
    for (const [type, mid] of Object.entries(ids)) {
      const v = type === "password" ? 2 : 1;
      const stale = await f.admin.patch(`/v1/auth-methods/${mid}`, { version: v + 5, name: `n-${type}` });
      assertEquals(stale.status, 409, type);
      assertEquals(stale.body, {
        kind: "Aborted",
        message: `Version mismatch: request has version ${v + 5}, current version is ${v}.`,
      });
    }
    const stateChange = await f.admin.post(`/v1/auth-methods/${ids.oidc}:change-state`, {
      version: 9,
      attributes: { state: "inactive" },
    });
    assertEquals(stateChange.status, 409);
    assertStringIncludes(stateChange.body.message, "request has version 9, current version is 1");
  }));

Deno.test("auth method delete returns {} and then 404, cascading to accounts and tokens", () =>
  withAuthServer(async (f) => {
    const m = await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
    const { client: bob, accountId } = await makeUser(f, "bob", m.body.id);
    assertEquals((await bob.get(`/v1/accounts/${accountId}`)).status, 200);
    const d = await f.admin.delete(`/v1/auth-methods/${m.body.id}`);
    assertEquals(d.status, 200);
    assertEquals(d.body, {});
    assertEquals((await f.admin.get(`/v1/auth-methods/${m.body.id}`)).status, 404);
    assertEquals((await f.admin.delete(`/v1/auth-methods/${m.body.id}`)).status, 404);
    assertEquals((await f.admin.get(`/v1/accounts/${accountId}`)).status, 404);
    assertEquals(
      (await bob.get(`/v1/accounts/${accountId}`)).status,
      401,
      "the user's token died with the method",
    );
    const last = await f.admin.delete(`/v1/auth-methods/${f.primaryMethodId}`);
    assertEquals(last.status, 400);
    assertEquals(last.body, { kind: "FailedPrecondition", message: "Cannot remove the last admin." });
  }));

Deno.test("change-state is only for OIDC and checks the state and version", () =>
  withAuthServer(async (f) => {
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: minimalLdapAttrs,
    });
    for (const id of [f.primaryMethodId, ldap.body.id]) {
      const r = await f.admin.post(`/v1/auth-methods/${id}:change-state`, {
        version: 1,
        attributes: { state: "active-public" },
      });
      assertEquals(r.status, 404);
      assertEquals(r.body, {
        kind: "NotFound",
        message: 'This endpoint is only available for the "oidc" Auth Method type.',
      });
    }
    const o = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: minimalOidcAttrs,
    });
    const url = `/v1/auth-methods/${o.body.id}:change-state`;
    assertEquals(fieldNames((await f.admin.post(url, { version: 1, attributes: { state: "on" } })).body), [
      "attributes.state",
    ]);
    assertEquals(fieldNames((await f.admin.post(url, { version: 1 })).body), ["attributes"]);
    const noVersion = await f.admin.post(url, { attributes: { state: "inactive" } });
    assertEquals(noVersion.body.details.request_fields, [{
      name: "version",
      description: "Resource version is required.",
    }]);
    const incomplete = await f.admin.post(url, {
      version: 1,
      attributes: { state: "active-public", disable_discovered_config_validation: true },
    });
    assertEquals(incomplete.status, 400);
    assertStringIncludes(incomplete.body.message, "Unable to change auth method state");
    assertEquals(fieldNames(incomplete.body), ["attributes.issuer", "attributes.signing_algorithms"]);
    const same = await f.admin.post(url, { version: 1, attributes: { state: "inactive" } });
    assertEquals(same.status, 200);
    assertEquals(same.body.version, 1);
    assertEquals((await f.anon.post(url, { version: 1, attributes: { state: "inactive" } })).status, 401);
  }));
