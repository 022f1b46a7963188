// Concurrent writes whose invariants span documents: the last-admin rule and no orphans under a deleted parent.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client, makeUser, withAuthServer } from "./helpers.ts";

Deno.test("last-admin rule holds when a demotion and an account delete race", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < 3; round++) {
      const { client: ivy } = await makeUser(f, `ivy${round}`);
      const users = (await f.admin.get("/v1/users?scope_id=global")).body.items;
      const ivyUser = users.find((u: { login_name?: string }) => u.login_name === `ivy${round}`);
      const promoted = await f.admin.patch(`/v1/users/${ivyUser.id}`, {
        version: ivyUser.version,
        admin: true,
      });
      assertEquals(promoted.status, 200);
      const adminAccount = (await ivy.get(`/v1/accounts?auth_method_id=${f.primaryMethodId}`)).body.items
        .find((a: { attributes: { login_name: string } }) => a.attributes.login_name === "admin");
      // ivy deletes the admin's account while the admin demotes ivy: at most one may succeed.
      const [removed, demoted] = await Promise.all([
        ivy.delete(`/v1/accounts/${adminAccount.id}`),
        f.admin.patch(`/v1/users/${ivyUser.id}`, { version: promoted.body.version, admin: false }),
      ]);
      assert(
        removed.status !== 200 || demoted.status !== 200,
        `both succeeded: no admin left (round ${round})`,
      );
      if (removed.status === 200) return; // the bootstrap admin is gone; the invariant held
      await f.admin.patch(`/v1/users/${ivyUser.id}`, { version: demoted.body.version, admin: false });
    }
  }));

Deno.test("a method created while its org is deleted does not outlive the org", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < 4; round++) {
      const org = await f.admin.post("/v1/scopes", { scope_id: "global", name: `org-${round}` });
      assertEquals(org.status, 200);
      const [created, deleted] = await Promise.all([
        f.admin.post("/v1/auth-methods", { scope_id: org.body.id, type: "password" }),
        f.admin.delete(`/v1/scopes/${org.body.id}`),
      ]);
      assertEquals(deleted.status, 200);
      if (created.status === 200) {
        assertEquals((await f.admin.get(`/v1/auth-methods/${created.body.id}`)).status, 404, "orphan method");
      } else assertEquals(created.status, 404);
    }
  }));

Deno.test("an account created while its method is deleted does not outlive the method", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < 4; round++) {
      const m = await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
      assertEquals(m.status, 200);
      const [created, deleted] = await Promise.all([
        f.admin.post("/v1/accounts", {
          auth_method_id: m.body.id,
          attributes: { login_name: `racer${round}`, password: "user-password-1" },
        }),
        f.admin.delete(`/v1/auth-methods/${m.body.id}`),
      ]);
      assertEquals(deleted.status, 200);
      if (created.status === 200) {
        assertEquals((await f.admin.get(`/v1/accounts/${created.body.id}`)).status, 404, "orphan account");
      } else assertEquals(created.status, 404);
    }
  }));

Deno.test("a login with the old password that races set-password leaves no usable token", () =>
  withAuthServer(async (f) => {
    const { accountId } = await makeUser(f, "rita");
    let version = (await f.admin.get(`/v1/accounts/${accountId}`)).body.version;
    let oldPassword = "user-password-1";
    for (let round = 0; round < 8; round++) {
      const newPassword = `new-password-${round}`;
      const [loggedIn, set] = await Promise.all([
        f.anon.post(`/v1/auth-methods/${f.primaryMethodId}:authenticate`, {
          attributes: { login_name: "rita", password: oldPassword },
        }),
        f.admin.post(`/v1/accounts/${accountId}:set-password`, { version, password: newPassword }),
      ]);
      assertEquals(set.status, 200);
      version = set.body.version;
      oldPassword = newPassword;
      if (loggedIn.status !== 200) continue;
      const rita = new Client(f.server.url, loggedIn.body.attributes.token);
      assertEquals(
        (await rita.get(`/v1/accounts/${accountId}`)).status,
        401,
        `round ${round}: token survived`,
      );
    }
  }));

Deno.test("a scope's primary method set while that method is deleted does not dangle", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < 4; round++) {
      const m = await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
      assertEquals(m.status, 200);
      const scope = (await f.admin.get("/v1/scopes/global")).body;
      const [deleted, patched] = await Promise.all([
        f.admin.delete(`/v1/auth-methods/${m.body.id}`),
        f.admin.patch("/v1/scopes/global", { version: scope.version, primary_auth_method_id: m.body.id }),
      ]);
      assertEquals(deleted.status, 200);
      const after = (await f.admin.get("/v1/scopes/global")).body;
      assert(after.primary_auth_method_id !== m.body.id, `round ${round}: primary is a deleted method`);
      if (patched.status === 200) {
        // Put the bootstrap method back as primary for the next round.
        await f.admin.patch("/v1/scopes/global", {
          version: after.version,
          primary_auth_method_id: f.primaryMethodId,
        });
      } else assertEquals(patched.status, 400);
    }
  }));

Deno.test("renaming an account while its user is promoted loses neither change", () =>
  withAuthServer(async (f) => {
    for (let round = 0; round < 6; round++) {
      const { accountId } = await makeUser(f, `sam${round}`);
      const account = (await f.admin.get(`/v1/accounts/${accountId}`)).body;
      const user = (await f.admin.get("/v1/users?scope_id=global")).body.items
        .find((u: { account_ids: string[] }) => u.account_ids.includes(accountId));
      const [promoted, renamed] = await Promise.all([
        f.admin.patch(`/v1/users/${user.id}`, { version: user.version, admin: true }),
        f.admin.patch(`/v1/accounts/${accountId}`, {
          version: account.version,
          attributes: { login_name: `samuel${round}` },
        }),
      ]);
      assertEquals(renamed.status, 200);
      const after = (await f.admin.get(`/v1/users/${user.id}`)).body;
      if (promoted.status === 200) assertEquals(after.admin, true, `round ${round}: promotion lost`);
      assertEquals(after.login_name, `samuel${round}`);
    }
  }));
