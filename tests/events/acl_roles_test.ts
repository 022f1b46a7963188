// ACL roles over HTTP: Nomad's validation and ACL checks, CRUD by ID and name, prefix listing, events, and the
// role links tokens carry (docs/events.md#acl-roles).

import { assert, assertEquals } from "../helpers/assert.ts";
import { call, putPolicy, rootSecret, startEventsServer, subscribe } from "./stream_helpers.ts";

type Role = { ID: string; Name: string; Description: string; Policies: Array<{ Name: string }> } & {
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
};
type Token = { AccessorID: string; SecretID: string; Roles: Array<{ ID: string; Name: string }> | null };

Deno.test("acl roles: validation, CRUD, events and the role links of tokens", async (t) => {
  const srv = await startEventsServer();
  /** token null: no token header. */
  const api = (method: string, path: string, body?: unknown, token: string | null = rootSecret) =>
    call(srv.url, method, path, { token: token ?? undefined, body });
  try {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    await putPolicy(srv.url, "jobs", 'namespace "default" { policy = "read" }');
    const events = await subscribe(srv.url, "topic=ACLRole&index=-1");
    let role!: Role;
    let other!: Role;

    await t.step("a create is validated in Nomad's words and needs a management token", async () => {
      const cases: Array<[unknown, number, string]> = [
        [{ Name: "bad name", Policies: [{ Name: "nodes" }] }, 400, "role 0 invalid: invalid name 'bad name'"],
        [
          { Name: "x".repeat(129), Policies: [{ Name: "nodes" }] },
          400,
          `role 0 invalid: invalid name '${"x".repeat(129)}'`,
        ],
        [
          { Name: "r", Description: "d".repeat(257), Policies: [{ Name: "nodes" }] },
          400,
          "role 0 invalid: description longer than 256",
        ],
        [{ Name: "r" }, 400, "role 0 invalid: at least one policy should be specified"],
        [{ Name: "r", Policies: [{ Name: "nope" }] }, 400, "cannot find policy nope"],
        [{ Name: "r", Policies: "nodes" }, 400, ""],
        [
          { ID: "0b8c4c1e-5d0b-4b8e-9a55-1d2c3b4a5f60", Name: "r", Policies: [{ Name: "nodes" }] },
          400,
          "cannot find role 0b8c4c1e-5d0b-4b8e-9a55-1d2c3b4a5f60",
        ],
      ];
      for (const [body, status, text] of cases) {
        const r = await api("PUT", "/v1/acl/role", body);
        assertEquals(r.status, status, JSON.stringify(body));
        if (text) assertEquals(r.text, text);
      }
      const anonymous = await api(
        "PUT",
        "/v1/acl/role",
        { Name: "r", Policies: [{ Name: "nodes" }] },
        null,
      );
      assertEquals([anonymous.status, anonymous.text], [403, "Permission denied"]);
      const empty = await api("PUT", "/v1/acl/role");
      assertEquals([empty.status, empty.text], [400, "Failed to decode request body: EOF"]);
    });

    await t.step(
      "a role is created with deduplicated links, read by ID and by name, and listed",
      async () => {
        const r = await api("PUT", "/v1/acl/role", {
          name: "readers",
          description: "read nodes",
          policies: [{ Name: "nodes" }, { Name: "nodes" }],
        });
        assertEquals(r.status, 200, r.text);
        role = r.json as Role;
        assertEquals(Object.keys(role), [
          "ID",
          "Name",
          "Description",
          "Policies",
          "Hash",
          "CreateIndex",
          "ModifyIndex",
        ]);
        assertEquals([role.Name, role.Description, role.Policies], ["readers", "read nodes", [{
          Name: "nodes",
        }]]);
        assertEquals(r.headers.get("X-Nomad-Index"), String(role.CreateIndex));
        const dup = await api("PUT", "/v1/acl/role", { Name: "readers", Policies: [{ Name: "jobs" }] });
        assertEquals([dup.status, dup.text], [400, "role with name readers already exists"]);
        other = (await api("PUT", "/v1/acl/role", { Name: "jobbers", Policies: [{ Name: "jobs" }] }))
          .json as Role;

        const byId = await api("GET", `/v1/acl/role/${role.ID}`);
        assertEquals([byId.status, byId.json], [200, role]);
        assertEquals(byId.headers.get("X-Nomad-Index"), String(role.ModifyIndex));
        const byName = await api("GET", "/v1/acl/role/name/readers");
        assertEquals([byName.status, byName.json], [200, role]);
        assertEquals((await api("GET", "/v1/acl/role/name/nobody")).status, 404);
        const missing = await api("GET", "/v1/acl/role/0b8c4c1e-5d0b-4b8e-9a55-1d2c3b4a5f60");
        assertEquals([missing.status, missing.text], [404, "ACL role not found"]);

        const all = (await api("GET", "/v1/acl/roles")).json as Role[];
        assertEquals(all.map((x) => x.ID), [role.ID, other.ID].sort());
        const prefixed = (await api("GET", `/v1/acl/roles?prefix=${role.ID.slice(0, 8)}`)).json as Role[];
        assertEquals(prefixed.map((x) => x.ID), [role.ID]);
        assertEquals((await api("GET", "/v1/acl/roles?prefix=zzzz")).json, []);
      },
    );

    await t.step(
      "an update keeps CreateIndex, checks the path ID and name clashes; no change writes nothing",
      async () => {
        const mismatch = await api("POST", `/v1/acl/role/${role.ID}`, {
          Name: "readers",
          Policies: [{ Name: "nodes" }],
        });
        assertEquals([mismatch.status, mismatch.text], [400, "ACL role ID does not match request path"]);
        const clash = await api("POST", `/v1/acl/role/${role.ID}`, {
          ID: role.ID,
          Name: "jobbers",
          Policies: [{ Name: "nodes" }],
        });
        assertEquals([clash.status, clash.text], [400, "ACL role with name jobbers already exists"]);
        const same = await api("POST", `/v1/acl/role/${role.ID}`, {
          ID: role.ID,
          Name: "readers",
          Description: "read nodes",
          Policies: [{ Name: "nodes" }],
        });
        assertEquals([same.status, (same.json as Role).ModifyIndex], [200, role.ModifyIndex]);
        const renamed = await api("PUT", `/v1/acl/role/${role.ID}`, {
          ID: role.ID,
          Name: "node-readers",
          Policies: [{ Name: "nodes" }, { Name: "jobs" }],
        });
        assertEquals(renamed.status, 200, renamed.text);
        const updated = renamed.json as Role;
        assertEquals(updated.CreateIndex, role.CreateIndex);
        assert(updated.ModifyIndex > role.ModifyIndex);
        assert(updated.Hash !== role.Hash);
        assertEquals((await api("GET", "/v1/acl/role/name/readers")).status, 404);
        role = updated;
      },
    );

    await t.step(
      "tokens link roles by name or ID, render their current names, and read only their roles",
      async () => {
        const unknown = await api("PUT", "/v1/acl/token", { Type: "client", Roles: [{ Name: "nobody" }] });
        assertEquals([unknown.status, unknown.text], [400, "cannot find role nobody"]);
        const created = await api("PUT", "/v1/acl/token", {
          Name: "via-role",
          Type: "client",
          Roles: [{ Name: "node-readers" }, { ID: role.ID }],
        });
        assertEquals(created.status, 200, created.text);
        const token = created.json as Token;
        assertEquals(token.Roles, [{ ID: role.ID, Name: "node-readers" }]);
        const stub = ((await api("GET", "/v1/acl/tokens")).json as Token[]).find((x) =>
          x.AccessorID === token.AccessorID
        );
        assertEquals(stub?.Roles, [{ ID: role.ID, Name: "node-readers" }]);

        const mine = (path: string) => api("GET", path, undefined, token.SecretID);
        assertEquals((await mine(`/v1/acl/role/${role.ID}`)).status, 200);
        assertEquals((await mine("/v1/acl/role/name/node-readers")).status, 200);
        assertEquals([(await mine(`/v1/acl/role/${other.ID}`)).status], [403]);
        assertEquals((await mine("/v1/acl/role/name/jobbers")).status, 403);
        assertEquals(((await mine("/v1/acl/roles")).json as Role[]).map((x) => x.ID), [role.ID]);
        const write = await api("DELETE", `/v1/acl/role/${role.ID}`, undefined, token.SecretID);
        assertEquals([write.status, write.text], [403, "Permission denied"]);

        // Replacing the links on update; the hash follows them.
        const updated = await api("POST", `/v1/acl/token/${token.AccessorID}`, {
          Name: "via-role",
          Type: "client",
          Roles: [{ ID: other.ID }],
        });
        assertEquals((updated.json as Token).Roles, [{ ID: other.ID, Name: "jobbers" }]);
      },
    );

    await t.step("deleting a role answers 200 once, then 404; its events carry the role", async () => {
      const del = await api("DELETE", `/v1/acl/role/${other.ID}`);
      assertEquals(del.status, 200);
      const again = await api("DELETE", `/v1/acl/role/${other.ID}`);
      assertEquals([again.status, again.text], [404, "ACL role not found"]);
      const frames = await events.dataUntilQuiet(300);
      const seen = frames.flatMap((f) => f.Events!).map((
        e,
      ) => [e.Type, e.Key, (e.FilterKeys as string[])[0]]);
      assertEquals(seen, [
        ["ACLRoleUpserted", role.ID, "readers"],
        ["ACLRoleUpserted", other.ID, "jobbers"],
        ["ACLRoleUpserted", role.ID, "node-readers"],
        ["ACLRoleDeleted", other.ID, "jobbers"],
      ]);
      const payload = frames.at(-1)!.Events!.at(-1)!.Payload as { ACLRole: Role };
      assertEquals(payload.ACLRole.ID, other.ID);
    });
    await events.close();
  } finally {
    await srv.stop();
  }
});
