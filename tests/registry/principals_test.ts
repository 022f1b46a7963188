// Service principals: the admin API (admins and the organization's owners), the CLI, what a principal's token
// may do (act as a member of its organization), and revocation with the principal or the organization.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { type CliIo, runRegistryCli } from "../../cli/registry/mod.ts";
import {
  ADMIN_PASSWORD,
  Client,
  createOrg,
  createUser,
  type Fixture,
  publishExternal,
  registryTest,
} from "./helpers.ts";
import { createPrincipal, principalToken, spPath, tokenCall } from "./principal_helpers.ts";

async function acme(f: Fixture) {
  const alice = await createUser(f, "alice");
  const bob = await createUser(f, "bob");
  const carol = await createUser(f, "carol");
  await createOrg(f, "acme", [{ username: "alice", role: "owner" }, { username: "bob", role: "member" }]);
  return { alice, bob, carol };
}

registryTest("admins and owners manage an organization's service principals; others may not", async (f) => {
  const { alice, bob, carol } = await acme(f);
  const body = { service_principal: { name: "ci" } };
  assertEquals((await f.api.post(spPath("acme"), body)).status, 401);
  for (const token of [bob, carol]) {
    const a = await f.api.post(spPath("acme"), body, { token });
    assertEquals([a.status, a.body.errors], [403, [
      "You are not allowed to manage service principals of 'acme'!",
    ]]);
    assertEquals((await f.api.get(spPath("acme"), { token })).status, 403);
  }
  assertEquals((await f.api.post(spPath("nobody"), body, { token: f.admin })).status, 404);
  // A user is no organization.
  assertEquals((await f.api.post(spPath("alice"), body, { token: f.admin })).status, 404);

  const created = await f.api.post(spPath("acme"), body, { token: alice });
  assertEquals(created.status, 201, created.text);
  assertEquals(Object.keys(created.body).sort(), ["client_id", "client_secret", "created_at", "name"]);
  assertEquals(created.body.name, "ci");
  assertMatch(created.body.client_id, /^sp_[A-Za-z0-9]{24}$/);
  assertMatch(created.body.client_secret, /^wharf_sp_[A-Za-z0-9_-]{43}$/);
  assertEquals(created.headers.get("cache-control"), "no-store");
  // A bare body, by an admin, through the v2 twin of the route.
  const second = await f.api.post(
    "/api/v2/admin/organizations/ACME/service-principals",
    { name: "nightly" },
    {
      token: f.admin,
    },
  );
  assertEquals(second.status, 201, second.text);

  const dup = await f.api.post(spPath("acme"), { service_principal: { name: "CI" } }, { token: alice });
  assertEquals([dup.status, dup.body.errors], [422, ["Name has already been taken"]]);
  const blank = await f.api.post(spPath("acme"), { service_principal: { name: " " } }, { token: alice });
  assertEquals([blank.status, blank.body.errors], [422, ["Name can't be blank"]]);
  const long = await f.api.post(spPath("acme"), { name: "x".repeat(256) }, { token: alice });
  assertEquals(long.status, 422);

  for (const path of [spPath("acme"), "/api/v2/admin/organizations/acme/service-principals"]) {
    const list = await f.api.get(path, { token: alice });
    assertEquals(list.status, 200, list.text);
    assertEquals(list.body.service_principals.map((p: { name: string }) => p.name), ["ci", "nightly"]);
    for (const p of list.body.service_principals) {
      assertEquals(Object.keys(p).sort(), ["client_id", "created_at", "last_used_at", "name"]);
      assertEquals(p.last_used_at, null);
    }
    assert(!list.text.includes(created.body.client_secret));
  }

  await createOrg(f, "globex", []);
  const foreign = await createPrincipal(f, "globex", "ci");
  const wrongOrg = await f.api.delete(`${spPath("acme")}/${foreign.client_id}`, { token: alice });
  assertEquals(wrongOrg.status, 404);
  assertEquals((await f.api.delete(`${spPath("acme")}/sp_unknown`, { token: alice })).status, 404);
  assertEquals(
    (await f.api.delete(`${spPath("acme")}/${created.body.client_id}`, { token: bob })).status,
    403,
  );
  const gone = await f.api.delete(`${spPath("acme")}/${created.body.client_id}`, { token: alice });
  assertEquals(gone.status, 204, gone.text);
  const after = await f.api.get(spPath("acme"), { token: f.admin });
  assertEquals(after.body.service_principals.map((p: { name: string }) => p.name), ["nightly"]);
});

registryTest(
  "a principal's token writes only in its organization and reads what a member reads",
  async (f) => {
    const { alice } = await acme(f);
    await publishExternal(f, alice, "acme/private-box", "1.0.0", { isPrivate: true });
    await publishExternal(f, alice, "alice/own-box", "1.0.0", { isPrivate: true });
    await createOrg(f, "globex", []);
    const token = await principalToken(f, await createPrincipal(f, "acme", "ci"));

    for (const api of ["v1", "v2"]) {
      const who = await f.api.get(`/api/${api}/authenticate`, { token });
      assertEquals([who.status, who.body], [200, { user: { username: "acme" } }]);
    }
    await publishExternal(f, token, "acme/ci-box", "1.0.0");
    const bare = await f.api.post("/api/v1/boxes", { box: { name: "defaulted" } }, { token });
    assertEquals([bare.status, bare.body.tag], [200, "acme/defaulted"]);
    assertEquals((await f.api.get("/api/v1/box/acme/private-box", { token })).status, 200);
    assertEquals((await f.api.get("/api/v1/box/acme/private-box/version/1.0.0", { token })).status, 200);
    const ns = await f.api.get("/api/v1/user/acme", { token });
    assert(ns.body.boxes.some((b: { name: string }) => b.name === "private-box"), ns.text);
    const upd = await f.api.put("/api/v1/box/acme/private-box", { box: { short_description: "by ci" } }, {
      token,
    });
    assertEquals(upd.status, 200, upd.text);

    // Elsewhere: another user's private box is invisible, public namespaces are read-only.
    assertEquals((await f.api.get("/api/v1/box/alice/own-box", { token })).status, 404);
    for (const username of ["alice", "globex"]) {
      const a = await f.api.post("/api/v1/boxes", { box: { username, name: "intruder" } }, { token });
      assertEquals(a.status, 403, `${username}: ${a.text}`);
    }
    assertEquals((await f.api.put("/api/v1/box/alice/own-box", { box: {} }, { token })).status, 404);
    // No admin rights, no member management, no principals of its own organization.
    assertEquals((await f.api.get("/api/v1/admin/users", { token })).status, 403);
    assertEquals((await f.api.get(spPath("acme"), { token })).status, 403);
    assertEquals(
      (await f.api.put("/api/v1/admin/organizations/acme/members/carol", { role: "owner" }, { token }))
        .status,
      403,
    );
    // The organization's billing applies.
    await f.api.put("/api/v1/admin/organizations/acme", { delinquent: true }, { token: f.admin });
    assertEquals((await f.api.post("/api/v1/boxes", { box: { name: "late" } }, { token })).status, 402);
  },
);

registryTest(
  "deleting a principal revokes every token it got; deleting the organization removes it",
  async (f) => {
    const { alice } = await acme(f);
    const p = await createPrincipal(f, "acme", "ci");
    const tokens = [await principalToken(f, p), await principalToken(f, p)];
    const keep = await createPrincipal(f, "acme", "keep");
    const kept = await principalToken(f, keep);
    assertEquals((await f.api.delete(`${spPath("acme")}/${p.client_id}`, { token: alice })).status, 204);
    for (const token of tokens) {
      const a = await f.api.get("/api/v1/authenticate", { token });
      assertEquals([a.status, a.body.errors], [401, ["Bad access token!"]]);
      assertEquals((await f.api.post("/api/v1/boxes", { box: { name: "x" } }, { token })).status, 401);
    }
    const again = await tokenCall(f, {
      form: { grant_type: "client_credentials", client_id: p.client_id, client_secret: p.client_secret },
    });
    assertEquals([again.status, again.body.error], [401, "invalid_client"]);
    assertEquals((await f.api.get("/api/v1/authenticate", { token: kept })).status, 200);
    const stored = () =>
      [...f.srv.server.data.store.list<{ principal?: string }>("registry/tokens")].filter((t) =>
        t.doc.principal
      );
    assertEquals(stored().length, 1);

    // The organization goes, and with it its principals and their tokens: a new acme inherits nothing.
    assertEquals((await f.api.delete("/api/v1/admin/organizations/acme", { token: f.admin })).status, 200);
    assertEquals(stored().length, 0);
    await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
    assertEquals((await f.api.get("/api/v1/authenticate", { token: kept })).status, 401);
    const revived = await tokenCall(f, {
      form: {
        grant_type: "client_credentials",
        client_id: keep.client_id,
        client_secret: keep.client_secret,
      },
    });
    assertEquals(revived.status, 401);
    assertEquals((await f.api.get(spPath("acme"), { token: f.admin })).body, { service_principals: [] });
  },
);

registryTest("expired principal tokens are refused and removed at the next token request", {
  WHARF_REGISTRY_SP_TOKEN_TTL: "1s",
}, async (f) => {
  await acme(f);
  const p = await createPrincipal(f, "acme", "ci");
  const first = await principalToken(f, p);
  assertEquals((await f.api.get("/api/v1/authenticate", { token: first })).status, 200);
  await new Promise((r) => setTimeout(r, 1100));
  assertEquals((await f.api.get("/api/v1/authenticate", { token: first })).status, 401);
  const second = await principalToken(f, p);
  assertEquals((await f.api.get("/api/v1/authenticate", { token: second })).status, 200);
  const stored = [...f.srv.server.data.store.list<{ principal?: string }>("registry/tokens")]
    .filter((t) => t.doc.principal === p.client_id);
  assertEquals(stored.length, 1);
});

registryTest("last_used_at follows token requests and the tokens' use, and survives a restart", async (f) => {
  await acme(f);
  const p = await createPrincipal(f, "acme", "ci");
  const before = Date.now();
  const token = await principalToken(f, p);
  await f.api.get("/api/v1/authenticate", { token });
  const list = await f.api.get(spPath("acme"), { token: f.admin });
  const used = Date.parse(list.body.service_principals[0].last_used_at);
  assert(used >= before - 1000 && used <= Date.now() + 1000, list.text);
  const restarted = await f.srv.restart();
  try {
    const api = new Client(restarted.url);
    const admin = await api.login("admin", ADMIN_PASSWORD);
    const later = await api.get(spPath("acme"), { token: admin });
    assertEquals(later.body.service_principals[0].last_used_at, list.body.service_principals[0].last_used_at);
    assertEquals((await api.get("/api/v1/authenticate", { token })).status, 200);
  } finally {
    await restarted.stop({ keepData: true });
  }
});

function io(env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    readStdin: () => Promise.resolve(""),
    promptPassword: () => Promise.resolve(undefined),
    env,
  };
  return { cli, out, err };
}

registryTest("wharf registry sp create, list and delete manage service principals", async (f) => {
  const { alice, bob } = await acme(f);
  const env = { WHARF_SERVER: f.srv.url, WHARF_REGISTRY_TOKEN: alice };
  const create = io(env);
  assertEquals(await runRegistryCli(["sp", "create", "acme", "ci"], create.cli), 0);
  const created = JSON.parse(create.out[0]!);
  assertEquals(created.name, "ci");
  assert(created.client_secret.startsWith("wharf_sp_"));
  await principalToken(f, created);
  const list = io(env);
  assertEquals(await runRegistryCli(["sp", "list", "acme"], list.cli), 0);
  const listed = JSON.parse(list.out[0]!).service_principals;
  assertEquals(listed.map((p: { client_id: string }) => p.client_id), [created.client_id]);
  assert(listed[0].last_used_at !== null);
  const denied = io({ ...env, WHARF_REGISTRY_TOKEN: bob });
  assertEquals(await runRegistryCli(["sp", "delete", "acme", created.client_id], denied.cli), 1);
  assertEquals(denied.err, ["wharf registry: You are not allowed to manage service principals of 'acme'!"]);
  const usage = io(env);
  assertEquals(await runRegistryCli(["sp", "create", "acme"], usage.cli), 2);
  assert(usage.err[0]!.includes("missing NAME"), usage.err[0]);
  const del = io(env);
  assertEquals(await runRegistryCli(["sp", "delete", "acme", created.client_id], del.cli), 0);
  const empty = io(env);
  assertEquals(await runRegistryCli(["sp", "list", "acme"], empty.cli), 0);
  assertEquals(JSON.parse(empty.out[0]!), { service_principals: [] });
});

registryTest("a principal holds at most 1000 live tokens: the oldest goes first", {
  WHARF_RATE_LIMIT_RPS: "0",
}, async (f) => {
  await acme(f);
  const p = await createPrincipal(f, "acme", "ci");
  const first = await principalToken(f, p);
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 50 }, () => principalToken(f, p)));
  }
  const live = [...f.srv.server.data.store.list<{ principal?: string }>("registry/tokens")]
    .filter((t) => t.doc.principal === p.client_id);
  assertEquals(live.length, 1000);
  assertEquals((await f.api.get("/api/v1/authenticate", { token: first })).status, 401);
  const last = await principalToken(f, p);
  assertEquals((await f.api.get("/api/v1/authenticate", { token: last })).status, 200);
});
