// Integration tests of the supporting resources: scopes, accounts (set/change password), users, cascades.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { Client, fieldNames, login, makeUser, withAuthServer } from "./helpers.ts";

Deno.test("scopes: global is fixed, orgs are created under it with unique names and listed", () =>
  withAuthServer(async (f) => {
    const global = await f.admin.get("/v1/scopes/global");
    assertEquals(global.body.type, "global");
    assertEquals(global.body.name, "global");
    assertEquals(global.body.description, "Global Scope");
    assertEquals(global.body.primary_auth_method_id, f.primaryMethodId);
    const o = await f.admin.post("/v1/scopes", {
      scope_id: "global",
      name: "eng",
      description: "Engineering",
    });
    assertEquals(o.status, 200);
    assertMatch(o.body.id, /^o_[0-9A-Za-z]{10}$/);
    assertEquals(o.body.type, "org");
    assertEquals(o.body.scope_id, "global");
    assertEquals(fieldNames((await f.admin.post("/v1/scopes", { scope_id: "global", name: "eng" })).body), [
      "name",
    ]);
    assertEquals(fieldNames((await f.admin.post("/v1/scopes", { scope_id: o.body.id, name: "sub" })).body), [
      "scope_id",
    ]);
    const list = await f.admin.get("/v1/scopes?scope_id=global");
    assertEquals(list.body.items.map((s: { id: string }) => s.id), [o.body.id]);
    const rename = await f.admin.patch(`/v1/scopes/${o.body.id}`, { version: 1, name: "engineering" });
    assertEquals(rename.body.name, "engineering");
    assertEquals(rename.body.version, 2);
    assertEquals((await f.admin.patch("/v1/scopes/global", { version: 1, name: "x" })).status, 400);
    const m = await f.admin.post("/v1/auth-methods", { scope_id: o.body.id, type: "password" });
    const primary = await f.admin.patch(`/v1/scopes/${o.body.id}`, {
      version: 2,
      primary_auth_method_id: m.body.id,
    });
    assertEquals(primary.body.primary_auth_method_id, m.body.id);
    assertEquals((await f.admin.get(`/v1/auth-methods/${m.body.id}`)).body.is_primary, true);
    assertEquals(
      fieldNames(
        (await f.admin.patch(`/v1/scopes/${o.body.id}`, {
          version: 3,
          primary_auth_method_id: f.primaryMethodId,
        })).body,
      ),
      ["primary_auth_method_id"],
    );
    assertEquals(
      (await f.admin.patch(`/v1/scopes/${o.body.id}`, { version: 1, description: "x" })).status,
      409,
    );
    const { client: user } = await makeUser(f, "scopereader");
    assertEquals((await user.get("/v1/scopes?scope_id=global")).status, 200);
    assertEquals((await user.get(`/v1/scopes/${o.body.id}`)).status, 200);
    assertEquals((await user.post("/v1/scopes", { scope_id: "global" })).status, 403);
    assertEquals((await f.anon.get("/v1/scopes?scope_id=global")).status, 401);
    assertEquals((await f.admin.get("/v1/scopes/o_bad-id")).status, 400);
    assertEquals((await f.admin.get("/v1/scopes/o_1234567890")).status, 404);
    assertEquals((await f.admin.delete("/v1/scopes/global")).status, 400);
  }));

Deno.test("scopes: deleting an org cascades to its methods, accounts, users and tokens", () =>
  withAuthServer(async (f) => {
    const o = await f.admin.post("/v1/scopes", { scope_id: "global", name: "doomed" });
    const m = await f.admin.post("/v1/auth-methods", { scope_id: o.body.id, type: "password" });
    const { client, accountId } = await makeUser(f, "frank", m.body.id);
    const me = await client.get(`/v1/accounts/${accountId}`);
    const d = await f.admin.delete(`/v1/scopes/${o.body.id}`);
    assertEquals(d.status, 200);
    assertEquals(d.body, {});
    assertEquals((await f.admin.get(`/v1/auth-methods/${m.body.id}`)).status, 404);
    assertEquals((await f.admin.get(`/v1/accounts/${accountId}`)).status, 404);
    assertEquals((await f.admin.get(`/v1/users/${me.body.id}`)).status, 400, "account ids are not user ids");
    assertEquals((await client.get(`/v1/accounts/${accountId}`)).status, 401);
  }));

Deno.test("accounts: login names and passwords are validated; duplicates refused", () =>
  withAuthServer(async (f) => {
    const create = (attributes: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      f.admin.post("/v1/accounts", { auth_method_id: f.primaryMethodId, attributes, ...extra });
    assertEquals(fieldNames((await create({ login_name: "Upper", password: "long-enough-1" })).body), [
      "attributes.login_name",
    ]);
    assertEquals(fieldNames((await create({ login_name: "ab", password: "long-enough-1" })).body), [
      "attributes.login_name",
    ]);
    assertEquals(fieldNames((await create({ login_name: "shorty", password: "short" })).body), [
      "attributes.password",
    ]);
    assertEquals(
      fieldNames((await create({ login_name: "shorty", password: "long-enough-1", extra: 1 })).body),
      ["attributes.extra"],
    );
    const ok = await create({ login_name: "grace.h-1", password: "long-enough-1" }, { name: "Grace" });
    assertEquals(ok.status, 200);
    assertMatch(ok.body.id, /^acctpw_[0-9A-Za-z]{10}$/);
    assertEquals(ok.body.attributes, { login_name: "grace.h-1" });
    assertEquals(ok.body.type, "password");
    assert(!JSON.stringify(ok.body).includes("long-enough-1"));
    assertEquals(fieldNames((await create({ login_name: "grace.h-1", password: "long-enough-1" })).body), [
      "attributes.login_name",
    ]);
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: { urls: ["ldap://x"] },
    });
    assertEquals(
      fieldNames(
        (await f.admin.post("/v1/accounts", {
          auth_method_id: ldap.body.id,
          attributes: { login_name: "x" },
        })).body,
      ),
      ["auth_method_id"],
    );
    assertEquals(
      (await f.admin.post("/v1/accounts", {
        auth_method_id: "ampw_1234567890",
        attributes: { login_name: "abc" },
      })).status,
      404,
    );
    const listed = await f.admin.get(`/v1/accounts?auth_method_id=${f.primaryMethodId}`);
    assertEquals(listed.body.items.length, 2);
    const renamed = await f.admin.patch(`/v1/accounts/${ok.body.id}`, {
      version: 1,
      attributes: { login_name: "grace2" },
    });
    assertEquals(renamed.body.attributes.login_name, "grace2");
    assertEquals(
      await login(f.anon, f.primaryMethodId, "grace2", "long-enough-1").then((t) => t.slice(0, 3)),
      "at_",
    );
  }));

Deno.test("accounts: set-password and change-password work; a wrong current password is 403", () =>
  withAuthServer(async (f) => {
    const { client: hank, accountId } = await makeUser(f, "hank");
    const other = await login(f.anon, f.primaryMethodId, "hank", "user-password-1");
    const wrong = await hank.post(`/v1/accounts/${accountId}:change-password`, {
      version: 1,
      current_password: "nope-nope",
      new_password: "brand-new-pw",
    });
    assertEquals(wrong.status, 403);
    assertEquals(wrong.body, { kind: "PermissionDenied", message: "Failed to change password." });
    const same = await hank.post(`/v1/accounts/${accountId}:change-password`, {
      version: 1,
      current_password: "user-password-1",
      new_password: "user-password-1",
    });
    assertEquals(fieldNames(same.body), ["new_password"]);
    const short = await hank.post(`/v1/accounts/${accountId}:change-password`, {
      version: 1,
      current_password: "user-password-1",
      new_password: "x",
    });
    assertEquals(fieldNames(short.body), ["new_password"]);
    const changed = await hank.post(`/v1/accounts/${accountId}:change-password`, {
      version: 1,
      current_password: "user-password-1",
      new_password: "brand-new-pw",
    });
    assertEquals(changed.status, 200);
    assertEquals(changed.body.version, 2);
    assertEquals(
      (await hank.get(`/v1/accounts/${accountId}`)).status,
      200,
      "the caller's own token survives",
    );
    assertEquals(
      (await new Client(f.server.url, other).get(`/v1/accounts/${accountId}`)).status,
      401,
      "other sessions end",
    );
    await login(f.anon, f.primaryMethodId, "hank", "brand-new-pw");
    assertEquals(
      (await hank.post(`/v1/accounts/${accountId}:set-password`, { version: 2, password: "x-x-x-x-x-x" }))
        .status,
      403,
    );
    const set = await f.admin.post(`/v1/accounts/${accountId}:set-password`, {
      version: 2,
      password: "admin-chosen-1",
    });
    assertEquals(set.status, 200);
    assertEquals(
      (await hank.get(`/v1/accounts/${accountId}`)).status,
      401,
      "set-password revokes the account's tokens",
    );
    await login(f.anon, f.primaryMethodId, "hank", "admin-chosen-1");
    assertEquals(
      (await f.admin.post(`/v1/accounts/${accountId}:set-password`, {
        version: 1,
        password: "admin-chosen-2",
      })).status,
      409,
    );
  }));

Deno.test("users: one per account, readable by self, admin flag guarded by the last-admin rule", () =>
  withAuthServer(async (f) => {
    const { client: ivy, accountId } = await makeUser(f, "ivy");
    const acct = await ivy.get(`/v1/accounts/${accountId}`);
    const users = await f.admin.get("/v1/users?scope_id=global");
    assertEquals(users.body.items.length, 2);
    const ivyUser = users.body.items.find((u: { login_name?: string }) => u.login_name === "ivy");
    assertEquals(ivyUser.account_ids, [accountId]);
    assertEquals(ivyUser.primary_account_id, accountId);
    assertEquals(acct.body.auth_method_id, f.primaryMethodId);
    assertEquals((await ivy.get(`/v1/users/${ivyUser.id}`)).status, 200);
    const adminUser = users.body.items.find((u: { admin?: boolean }) => u.admin);
    assertEquals((await ivy.get(`/v1/users/${adminUser.id}`)).status, 403);
    assertEquals((await ivy.get("/v1/users?scope_id=global")).status, 403);
    assertEquals((await ivy.patch(`/v1/users/${ivyUser.id}`, { version: 1, admin: true })).status, 403);
    const demote = await f.admin.patch(`/v1/users/${adminUser.id}`, {
      version: adminUser.version,
      admin: false,
    });
    assertEquals(demote.status, 400);
    assertEquals(demote.body, { kind: "FailedPrecondition", message: "Cannot remove the last admin." });
    const promote = await f.admin.patch(`/v1/users/${ivyUser.id}`, { version: 1, admin: true, name: "Ivy" });
    assertEquals(promote.body.admin, true);
    assertEquals(
      (await ivy.get(`/v1/auth-methods/${f.primaryMethodId}`)).status,
      200,
      "admin rights apply at once",
    );
    assertEquals(
      (await f.admin.patch(`/v1/users/${adminUser.id}`, { version: adminUser.version, admin: false })).status,
      200,
    );
    const adminAccount = (await ivy.get(`/v1/accounts?auth_method_id=${f.primaryMethodId}`)).body.items.find((
      a: { attributes: { login_name: string } },
    ) => a.attributes.login_name === "admin");
    assertEquals((await ivy.delete(`/v1/accounts/${adminAccount.id}`)).status, 200);
    assertEquals(
      (await ivy.delete(`/v1/accounts/${accountId}`)).body.message,
      "Cannot remove the last admin.",
    );
  }));
