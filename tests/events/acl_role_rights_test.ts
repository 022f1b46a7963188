// A token's rights through its roles are resolved at request time: a deleted role or policy takes them at once,
// from requests, from policy/self and from open event streams (docs/events.md#acl-roles).

import { assert, assertEquals } from "../helpers/assert.ts";
import * as helpers from "./stream_helpers.ts";

const { call, createToken, nodeEvent, publish, putPolicy, rootSecret, startEventsServer, subscribe } =
  helpers;

type Named = { Name: string };

Deno.test("acl roles grant their policies at request time, and stop granting them when they go", async (t) => {
  const srv = await startEventsServer();
  const api = (method: string, path: string, token: string | null, body?: unknown) =>
    call(srv.url, method, path, { token: token ?? undefined, body });
  const putRole = async (body: Record<string, unknown>, id = "") => {
    const r = await api(
      "PUT",
      id ? `/v1/acl/role/${id}` : "/v1/acl/role",
      rootSecret,
      id ? { ID: id, ...body } : body,
    );
    if (r.status !== 200) throw new Error(`role: ${r.status} ${r.text}`);
    return (r.json as { ID: string }).ID;
  };
  const roleToken = async (roleId: string, policies: string[] = []) =>
    await createToken(srv.url, policies, { Roles: [{ ID: roleId }] });
  const names = (json: unknown) => (json as Named[]).map((p) => p.Name);
  try {
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    await putPolicy(srv.url, "jobs", 'namespace "default" { policy = "read" }');

    await t.step(
      "deleting the role's policy, narrowing the role or deleting it takes the right at once",
      async () => {
        const roleId = await putRole({ Name: "node-readers", Policies: [{ Name: "nodes" }] });
        const token = await roleToken(roleId);
        const nodes = async () => (await api("GET", "/v1/nodes", token.SecretID)).status;
        assertEquals(await nodes(), 200);
        assertEquals((await api("GET", "/v1/acl/policy/nodes", token.SecretID)).status, 200);

        assertEquals((await api("DELETE", "/v1/acl/policy/nodes", rootSecret)).status, 200);
        assertEquals(await nodes(), 403);
        await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
        assertEquals(await nodes(), 200);

        await putRole({ Name: "node-readers", Policies: [{ Name: "jobs" }] }, roleId);
        assertEquals(await nodes(), 403);
        assertEquals((await api("GET", "/v1/acl/policy/nodes", token.SecretID)).status, 403);
        await putRole({ Name: "node-readers", Policies: [{ Name: "nodes" }] }, roleId);
        assertEquals(await nodes(), 200);

        assertEquals((await api("DELETE", `/v1/acl/role/${roleId}`, rootSecret)).status, 200);
        assertEquals(await nodes(), 403);
        // As in Nomad, the token keeps no link to a deleted role.
        const self = await api("GET", "/v1/acl/token/self", token.SecretID);
        assertEquals([self.status, (self.json as { Roles: unknown }).Roles], [200, []]);
        assertEquals(names((await api("GET", "/v1/acl/policy/self", token.SecretID)).json), []);
      },
    );

    await t.step(
      "policy/self lists the token's policies, its own and its roles'; all for management",
      async () => {
        await putPolicy(srv.url, "unrelated", 'node { policy = "deny" }');
        const roleId = await putRole({ Name: "self-role", Policies: [{ Name: "nodes" }] });
        const token = await roleToken(roleId, ["jobs"]);
        const mine = await api("GET", "/v1/acl/policy/self", token.SecretID);
        assertEquals([mine.status, names(mine.json)], [200, ["jobs", "nodes"]]);
        assertEquals(names((await api("GET", "/v1/acl/policy/self", rootSecret)).json), [
          "jobs",
          "nodes",
          "unrelated",
        ]);
        assertEquals(names((await api("GET", "/v1/acl/policy/self?prefix=no", rootSecret)).json), ["nodes"]);
        assertEquals(names((await api("GET", "/v1/acl/policies", token.SecretID)).json), ["jobs", "nodes"]);
        const anonymous = await api("GET", "/v1/acl/policy/self", null);
        assertEquals([anonymous.status, anonymous.text], [403, "Permission denied"]);
        const write = await api("PUT", "/v1/acl/policy/self", rootSecret, { Name: "self", Rules: "" });
        assertEquals(write.status, 405);
        assertEquals((await api("GET", "/v1/acl/policy/self", crypto.randomUUID())).status, 403);
      },
    );

    await t.step("an event stream on a role's rights ends when the role is deleted", async () => {
      const roleId = await putRole({ Name: "stream-role", Policies: [{ Name: "nodes" }] });
      const token = await roleToken(roleId);
      const s = await subscribe(srv.url, "topic=Node", token.SecretID);
      const first = await publish(srv.url, [nodeEvent("n1")]);
      assertEquals((await s.nextData())!.Index, first);
      const del = await api("DELETE", `/v1/acl/role/${roleId}`, rootSecret);
      assertEquals(del.status, 200);
      const revoking = Number(del.headers.get("X-Nomad-Index"));
      await publish(srv.url, [nodeEvent("n2")]);
      const rest = await s.readToEnd(5000);
      assert(rest.every((f) => f.Index! < revoking), "no frame at or above the revoking index");
      assert(s.done);
    });

    await t.step("an event stream on a role's rights ends when the role's policy is deleted", async () => {
      await putPolicy(srv.url, "nodes-too", 'node { policy = "read" }');
      const roleId = await putRole({ Name: "stream-role-2", Policies: [{ Name: "nodes-too" }] });
      const token = await roleToken(roleId);
      const kept = await createToken(srv.url, ["nodes"]);
      const s = await subscribe(srv.url, "topic=Node&index=-1", token.SecretID);
      const other = await subscribe(srv.url, "topic=Node&index=-1", kept.SecretID);
      const del = await api("DELETE", "/v1/acl/policy/nodes-too", rootSecret);
      const revoking = Number(del.headers.get("X-Nomad-Index"));
      const after = await publish(srv.url, [nodeEvent("n3")]);
      const rest = await s.readToEnd(5000);
      assert(rest.every((f) => f.Index! < revoking));
      assert(s.done);
      // A stream whose token does not depend on that policy goes on.
      assertEquals((await other.nextData())!.Index, after);
      await other.close();
    });
  } finally {
    await srv.stop();
  }
});
