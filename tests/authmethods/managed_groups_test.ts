// /v1/managed-groups through the HTTP API of a started wharf (docs/auth-methods.md#managed-groups): both types,
// validation errors, versions, list filter, list tokens and refresh, member_ids after real LDAP (slapd) and OIDC
// (oidc-provider) logins, and what deletion takes with it.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  groupsDn,
  peopleDn,
  rootDn,
  rootPassword,
  type Slapd,
  startSlapd,
  users,
} from "../fixtures/slapd.ts";
import { oidcUsers, startOidcProvider, wharfMethodAttributes } from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { type AuthServer, callApi, startAuthServer } from "../fixtures/wharf_auth.ts";
import { rootSecret, subscribe } from "../events/stream_helpers.ts";
import { listEveryPage } from "./helpers.ts";

const callbackPath = "/v1/auth-methods/oidc:authenticate:callback";
type Body = Record<string, unknown>;

function fields(body: Body): string[] {
  const details = body.details as { request_fields?: Array<{ name: string }> } | undefined;
  return (details?.request_fields ?? []).map((f) => f.name);
}

async function ok(p: Promise<{ status: number; body: Body }>): Promise<Body> {
  const r = await p;
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

async function createMethod(api: AuthServer, type: string, attributes: Body): Promise<string> {
  const b = await ok(api.call("POST", "/v1/auth-methods", { scope_id: "global", type, attributes }));
  return String(b.id);
}

async function createGroup(
  api: AuthServer,
  methodId: string,
  attributes: Body,
  name?: string,
): Promise<Body> {
  return await ok(api.call("POST", "/v1/managed-groups", {
    auth_method_id: methodId,
    ...(name ? { name } : {}),
    attributes,
  }));
}

async function members(api: AuthServer, groupId: string): Promise<string[]> {
  return ((await ok(api.call("GET", `/v1/managed-groups/${groupId}`))).member_ids ?? []) as string[];
}

async function groupsOfAccount(api: AuthServer, accountId: string): Promise<string[]> {
  return ((await ok(api.call("GET", `/v1/accounts/${accountId}`))).managed_group_ids ?? []) as string[];
}

/** Every page of /v1/managed-groups?<query> (listEveryPage). */
const listAll = (api: AuthServer, query: string, token?: string) =>
  listEveryPage((p) => api.call("GET", p), `/v1/managed-groups?${query}`, token);

async function ldapmodify(slapd: Slapd, ldif: string): Promise<void> {
  const cmd = new Deno.Command("ldapmodify", {
    args: ["-x", "-H", slapd.ldapUrl, "-D", rootDn, "-w", rootPassword],
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const writer = cmd.stdin.getWriter();
  await writer.write(new TextEncoder().encode(ldif));
  await writer.close();
  const out = await cmd.output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
}

async function ldapLogin(api: AuthServer, methodId: string, name: string, password: string): Promise<string> {
  const r = await callApi(api.url, "POST", `/v1/auth-methods/${methodId}:authenticate`, {
    command: "login",
    attributes: { login_name: name, password },
  });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return String((r.body.attributes as Body).account_id);
}

Deno.test("managed groups through the HTTP API, with memberships from real LDAP and OIDC logins", async (t) => {
  const api = await startAuthServer({
    WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
    WHARF_EVENTS_HEARTBEAT_MS: "50",
  });
  const slapd = await startSlapd();
  const op = await startOidcProvider({ redirectUris: [`${api.url}${callbackPath}`] });
  try {
    const ldapId = await createMethod(api, "ldap", {
      state: "active-public",
      urls: [slapd.ldapUrl],
      user_dn: peopleDn,
      user_attr: "uid",
      enable_groups: true,
      group_dn: groupsDn,
    });
    const oidcId = await createMethod(api, "oidc", {
      ...wharfMethodAttributes(op, api.url),
      claims_scopes: ["email", "profile", "groups"],
    });
    await ok(api.call("POST", `/v1/auth-methods/${oidcId}:change-state`, {
      version: 1,
      attributes: { state: "active-public" },
    }));
    const passwordId = String(
      ((await ok(api.call("GET", "/v1/auth-methods?scope_id=global"))).items as Body[])
        .find((m) => m.type === "password")!.id,
    );

    await t.step("validation errors in the family's shape; 401 without a token", async () => {
      const cases: Array<[Body, string[]]> = [
        [{ attributes: { group_names: ["x"] } }, ["auth_method_id"]],
        [{ auth_method_id: passwordId, attributes: {} }, ["auth_method_id"]],
        [{ auth_method_id: "amldap_!!" }, ["auth_method_id"]],
        [{ auth_method_id: ldapId }, ["attributes.group_names"]],
        [{ auth_method_id: ldapId, attributes: { group_names: [] } }, ["attributes.group_names"]],
        [{ auth_method_id: ldapId, attributes: { group_names: [""] } }, ["attributes.group_names"]],
        [{ auth_method_id: ldapId, type: "oidc", attributes: { group_names: ["a"] } }, ["type"]],
        [{ auth_method_id: ldapId, attributes: { group_names: ["a"], filter: "x" } }, ["attributes.filter"]],
        [{ auth_method_id: oidcId, attributes: {} }, ["attributes.filter"]],
        [{ auth_method_id: oidcId, attributes: { filter: '"/token/sub" ==' } }, ["attributes.filter"]],
        [{ auth_method_id: oidcId, attributes: { filter: '"/token/sub" == "x"' }, member_ids: ["a"] }, [
          "member_ids",
        ]],
      ];
      for (const [body, expected] of cases) {
        const r = await api.call("POST", "/v1/managed-groups", body);
        assertEquals(r.status, 400, JSON.stringify({ body, answer: r.body }));
        assertEquals(r.body.kind, "InvalidArgument");
        assertEquals(fields(r.body), expected, JSON.stringify(r.body));
      }
      const bad = await api.call("POST", "/v1/managed-groups", {
        auth_method_id: oidcId,
        attributes: { filter: '"/token/sub" ==' },
      });
      assertStringIncludes(JSON.stringify(bad.body), "Error evaluating submitted filter expression");
      const anon = await callApi(api.url, "POST", "/v1/managed-groups", {
        auth_method_id: ldapId,
        attributes: { group_names: ["x"] },
      });
      assertEquals(anon.status, 401);
      assertEquals(
        (await callApi(api.url, "GET", `/v1/managed-groups?auth_method_id=${ldapId}`)).status,
        401,
      );
      assertEquals((await api.call("GET", "/v1/managed-groups/mgldap_nosuchgroup1")).status, 404);
      assertEquals((await api.call("GET", "/v1/managed-groups/u_1234567890")).status, 400);
    });

    await t.step(
      "both types: create, read, update with version (409 stale, 400 none), name clash",
      async () => {
        const ldapGroup = await createGroup(
          api,
          ldapId,
          { group_names: ["admins", "admins"] },
          "admins-group",
        );
        assert(String(ldapGroup.id).startsWith("mgldap_"), String(ldapGroup.id));
        assertEquals(ldapGroup.type, "ldap");
        assertEquals(ldapGroup.version, 1);
        assertEquals(ldapGroup.auth_method_id, ldapId);
        assertEquals(ldapGroup.attributes, { group_names: ["admins"] });
        assertEquals(ldapGroup.authorized_actions, ["no-op", "read", "update", "delete"]);
        const oidcGroup = await createGroup(api, oidcId, { filter: '"/token/sub" == "x"' });
        assert(String(oidcGroup.id).startsWith("mgoidc_"), String(oidcGroup.id));
        assertEquals(oidcGroup.type, "oidc");
        const read = await ok(api.call("GET", `/v1/managed-groups/${oidcGroup.id}`));
        assertEquals(read.attributes, { filter: '"/token/sub" == "x"' });

        const path = `/v1/managed-groups/${oidcGroup.id}`;
        const updated = await ok(api.call("PATCH", path, {
          version: 1,
          name: "subject-x",
          attributes: { filter: '"/token/sub" == "y"' },
        }));
        assertEquals(updated.version, 2);
        assertEquals(updated.name, "subject-x");
        assertEquals(updated.attributes, { filter: '"/token/sub" == "y"' });
        const stale = await api.call("PATCH", path, { version: 1, description: "late" });
        assertEquals(stale.status, 409, JSON.stringify(stale.body));
        assertStringIncludes(String(stale.body.message), "current version is 2");
        const none = await api.call("PATCH", path, { description: "no version" });
        assertEquals(none.status, 400);
        assertEquals(fields(none.body), ["version"]);
        const empty = await api.call("PATCH", path, { version: 2, attributes: { filter: "" } });
        assertEquals(fields(empty.body), ["attributes.filter"]);
        const retype = await api.call("PATCH", path, { version: 2, type: "ldap" });
        assertEquals(fields(retype.body), ["type"]);
        const emptyNames = await api.call("PATCH", `/v1/managed-groups/${ldapGroup.id}`, {
          version: 1,
          attributes: { group_names: [] },
        });
        assertEquals(fields(emptyNames.body), ["attributes.group_names"]);
        const clash = await api.call("POST", "/v1/managed-groups", {
          auth_method_id: ldapId,
          name: "admins-group",
          attributes: { group_names: ["other"] },
        });
        assertEquals(clash.status, 400);
        assertEquals(fields(clash.body), ["name"]);
        const method = await ok(api.call("GET", `/v1/auth-methods/${ldapId}`));
        assertEquals(
          (method.authorized_collection_actions as Body)["managed-groups"],
          ["create", "list"],
        );
        await ok(api.call("DELETE", path));
        await ok(api.call("DELETE", `/v1/managed-groups/${ldapGroup.id}`));
        assertEquals((await api.call("GET", path)).status, 404);
      },
    );

    await t.step("list: auth_method_id required, filter, pages with list tokens, refresh", async () => {
      assertEquals(fields((await api.call("GET", "/v1/managed-groups")).body), ["auth_method_id"]);
      const created: string[] = [];
      for (let i = 0; i < 5; i++) {
        created.push(String((await createGroup(api, ldapId, { group_names: [`g${i}`] }, `list-${i}`)).id));
      }
      // The refresh below reads by updated_time: the listing starts after the last create's millisecond.
      await new Promise((r) => setTimeout(r, 20));
      const all = await listAll(api, `auth_method_id=${ldapId}&page_size=2`);
      assertEquals(all.pages, 3);
      assertEquals(all.ids, [...created].reverse());
      const filtered = await listAll(
        api,
        `auth_method_id=${ldapId}&filter=${
          encodeURIComponent('"/item/attributes/group_names" contains "g3"')
        }`,
      );
      assertEquals(filtered.ids, [created[3]]);
      const badFilter = await api.call("GET", `/v1/managed-groups?auth_method_id=${ldapId}&filter=%22x`);
      assertEquals(fields(badFilter.body), ["filter"]);
      // Refresh: an update and a delete since the listing, nothing else.
      const g1 = await ok(api.call("GET", `/v1/managed-groups/${created[1]}`));
      await ok(
        api.call("PATCH", `/v1/managed-groups/${created[1]}`, { version: g1.version, description: "d" }),
      );
      await ok(api.call("DELETE", `/v1/managed-groups/${created[2]}`));
      const refreshed = await listAll(api, `auth_method_id=${ldapId}&page_size=2`, all.token);
      assertEquals(refreshed.ids, [created[1]]);
      assertEquals(refreshed.removed, [created[2]]);
      for (const id of [created[0], created[1], created[3], created[4]]) {
        await ok(api.call("DELETE", `/v1/managed-groups/${id}`));
      }
    });

    await t.step(
      "LDAP: member_ids follow each login's directory groups (ldapmodify, then log in again)",
      async () => {
        const admins = await createGroup(api, ldapId, { group_names: ["admins"] });
        const devs = await createGroup(api, ldapId, { group_names: ["developers", "nobody-has-this"] });
        const alice = await ldapLogin(api, ldapId, "alice", users.alice.password);
        const bob = await ldapLogin(api, ldapId, "bob", users.bob.password);
        assertEquals(await members(api, String(admins.id)), [alice]);
        assertEquals(await members(api, String(devs.id)), [alice, bob].sort());
        assertEquals(await groupsOfAccount(api, alice), [String(admins.id), String(devs.id)].sort());
        assertEquals(await groupsOfAccount(api, bob), [String(devs.id)]);
        // A group created after the logins counts the groups those logins found (as Boundary's view does).
        const late = await createGroup(api, ldapId, { group_names: ["developers"] });
        assertEquals(await members(api, String(late.id)), [alice, bob].sort());

        await ldapmodify(
          slapd,
          // groupOfNames needs a member: carol takes alice's place.
          `dn: cn=admins,${groupsDn}\nchangetype: modify\nadd: member\nmember: ${users.carol.dn}\n-\n` +
            `delete: member\nmember: ${users.alice.dn}\n`,
        );
        // Membership changes at login, not before.
        assertEquals(await members(api, String(admins.id)), [alice]);
        assertEquals(await ldapLogin(api, ldapId, "alice", users.alice.password), alice);
        assertEquals(await members(api, String(admins.id)), []);
        assertEquals(await groupsOfAccount(api, alice), [String(devs.id), String(late.id)].sort());

        // Deleting the account ends its memberships.
        await ok(api.call("DELETE", `/v1/accounts/${bob}`));
        assertEquals(await members(api, String(devs.id)), [alice]);
      },
    );

    await t.step("OIDC: filters over /token and /userinfo decide member_ids at each login", async () => {
      const userinfoAdmins = await createGroup(api, oidcId, {
        filter: '"/userinfo/groups" contains "admins"',
      });
      const tokenBob = await createGroup(api, oidcId, { filter: `"/token/sub" == "${oidcUsers.bob.sub}"` });
      const noSuchClaim = await createGroup(api, oidcId, { filter: '"/token/not_a_claim" == "x"' });
      const oidcLogin = async (user: typeof oidcUsers.alice): Promise<string> => {
        const start = await callApi(api.url, "POST", `/v1/auth-methods/${oidcId}:authenticate`, {
          command: "start",
        });
        assertEquals(start.status, 200, JSON.stringify(start.body));
        const attrs = start.body.attributes as Record<string, string>;
        const { callbackUrl } = await completeProviderLogin(attrs.auth_url!, {
          login: user.login,
          password: user.password,
        });
        const cb = await fetch(callbackUrl, { redirect: "manual" });
        await cb.body?.cancel();
        assertEquals(cb.status, 302);
        const token = await callApi(api.url, "POST", `/v1/auth-methods/${oidcId}:authenticate`, {
          command: "token",
          attributes: { token_id: attrs.token_id },
        });
        assertEquals(token.status, 200, JSON.stringify(token.body));
        return String((token.body.attributes as Body).account_id);
      };
      const alice = await oidcLogin(oidcUsers.alice);
      const bob = await oidcLogin(oidcUsers.bob);
      assertEquals(await members(api, String(userinfoAdmins.id)), [alice]);
      assertEquals(await members(api, String(tokenBob.id)), [bob]);
      assertEquals(await members(api, String(noSuchClaim.id)), []);
      assertEquals(await groupsOfAccount(api, alice), [String(userinfoAdmins.id)]);

      // A group created now has no members until someone logs in (OIDC memberships are decided at login).
      const developers = await createGroup(api, oidcId, {
        filter: '"/userinfo/groups" contains "developers"',
      });
      assertEquals(await members(api, String(developers.id)), []);
      const saved = oidcUsers.alice.groups;
      oidcUsers.alice.groups = ["developers"];
      try {
        assertEquals(await oidcLogin(oidcUsers.alice), alice);
      } finally {
        oidcUsers.alice.groups = saved;
      }
      assertEquals(await members(api, String(userinfoAdmins.id)), []);
      assertEquals(await members(api, String(developers.id)), [alice]);
      assertEquals(await groupsOfAccount(api, alice), [String(developers.id)]);

      // A deleted group leaves the account's managed_group_ids at once.
      await ok(api.call("DELETE", `/v1/managed-groups/${developers.id}`));
      assertEquals(await groupsOfAccount(api, alice), []);
    });

    await t.step("deleting an auth method deletes its managed groups", async () => {
      const listed = await listAll(api, `auth_method_id=${oidcId}`);
      assert(listed.ids.length >= 3, JSON.stringify(listed));
      await ok(api.call("DELETE", `/v1/auth-methods/${oidcId}`));
      for (const id of listed.ids) {
        assertEquals((await api.call("GET", `/v1/managed-groups/${id}`)).status, 404);
      }
      assertEquals((await api.call("GET", `/v1/managed-groups?auth_method_id=${oidcId}`)).status, 404);
    });
    await t.step("changes are events on topic ManagedGroup, without members or claims", async () => {
      const stream = await subscribe(api.url, "topic=ManagedGroup&index=1");
      try {
        const events = (await stream.dataUntilQuiet(300)).flatMap((f) => f.Events ?? []);
        const types = new Set(events.map((e) => e.Type));
        assertEquals([...types].sort(), [
          "ManagedGroupCreated",
          "ManagedGroupDeleted",
          "ManagedGroupUpdated",
        ]);
        const updated = events.find((e) => e.Type === "ManagedGroupUpdated")!;
        const payload = (updated.Payload as { ManagedGroup: Body }).ManagedGroup;
        assertEquals(Object.keys(payload).sort(), [
          "actor_user_id",
          "auth_method_id",
          "changed_fields",
          "id",
          "scope_id",
          "type",
          "version",
        ]);
        const text = JSON.stringify(events);
        assert(!text.includes("member_ids") && !text.includes(oidcUsers.alice.sub), text.slice(0, 400));
      } finally {
        await stream.close();
      }
    });
  } finally {
    await Promise.all([op.stop(), slapd.stop(), api.stop()]);
  }
});
