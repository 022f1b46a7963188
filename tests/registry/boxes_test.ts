// Boxes, users/organizations and permissions over HTTP
// (docs/registry.md#users-and-organizations-admin-api).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { createOrg, createUser, publishExternal, registryTest } from "./helpers.ts";

const boxKeys = [
  "created_at",
  "current_version",
  "description",
  "description_html",
  "description_markdown",
  "downloads",
  "name",
  "private",
  "short_description",
  "tag",
  "updated_at",
  "username",
  "versions",
];

registryTest("admin API needs an admin: no token 401, a user 403, bad names 422", async (f) => {
  const alice = await createUser(f, "alice");
  assertEquals((await f.api.get("/api/v1/admin/users")).status, 401);
  const forbidden = await f.api.get("/api/v1/admin/users", { token: alice });
  assertEquals(forbidden.status, 403);
  assertEquals(forbidden.body.errors, ["Admin privileges required!"]);
  for (const username of ["Box", "-bad", "a".repeat(41), "uploads", "WHARF", "admin"]) {
    const r = await f.api.post("/api/v1/admin/users", {
      username,
      email: `${username}x@example.com`,
      password: "password-1",
    }, {
      token: f.admin,
    });
    assertEquals(r.status, 422, username);
  }
  const dup = await f.api.post("/api/v1/admin/users", {
    username: "ALICE",
    email: "a2@example.com",
    password: "password-1",
  }, {
    token: f.admin,
  });
  assertEquals(dup.body.errors, ["Username has already been taken"]);
  const two = await f.api.post("/api/v1/admin/users", { user: { username: "carol" } }, { token: f.admin });
  assertEquals(two.body.errors, ["Email can't be blank", "Password can't be blank"]);
  await createOrg(f, "acme", [{ username: "alice", role: "member" }]);
  const orgDup = await f.api.post("/api/v1/admin/organizations", { name: "Alice" }, { token: f.admin });
  assertEquals(orgDup.status, 422);
  const users = await f.api.get("/api/v1/admin/users", { token: f.admin });
  const a = users.body.users.find((u: { username: string }) => u.username === "alice");
  assertEquals(a.organizations, ["acme"]);
  assert(!("password_hash" in a) && !("password" in a));
  const orgs = await f.api.get("/api/v1/admin/organizations", { token: f.admin });
  assertEquals(orgs.body.organizations[0].members, [{ username: "alice", role: "member" }]);
});

registryTest(
  "boxes are created bare or wrapped, private by default, unique case-insensitively",
  async (f) => {
    const alice = await createUser(f, "alice");
    const bare = await f.api.post("/api/v1/boxes", { username: "alice", name: "devbox" }, { token: alice });
    assertEquals(bare.status, 200, bare.text);
    assertEquals(Object.keys(bare.body).sort(), boxKeys);
    assertEquals(bare.body.private, true);
    assertEquals(bare.body.versions, []);
    assertEquals(bare.body.tag, "alice/devbox");
    assertMatch(bare.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const wrapped = await f.api.post("/api/v1/boxes", {
      box: { name: "ubuntu-22.04", is_private: false, short_description: "s" },
    }, {
      token: alice,
    });
    assertEquals(wrapped.status, 200);
    assertEquals(wrapped.body.private, false);
    const dup = await f.api.post("/api/v1/boxes", { box: { name: "DEVBOX" } }, { token: alice });
    assertEquals(dup.status, 422);
    assertEquals(dup.body.errors, ["Name has already been taken"]);
    for (const name of [".", "..", "-x", "a/b", "", "x".repeat(101)]) {
      assertEquals((await f.api.post("/api/v1/boxes", { name }, { token: alice })).status, 422, name);
    }
    const unknownNs = await f.api.post("/api/v1/boxes", { username: "nobody", name: "x" }, { token: alice });
    assertEquals(unknownNs.status, 404);
    assertEquals((await f.api.get("/api/v1/box/ALICE/DevBox", { token: alice })).body.name, "devbox");
  },
);

registryTest(
  "box updates round-trip descriptions, null clears, absent keeps, absent is_private means private",
  async (f) => {
    const alice = await createUser(f, "alice");
    await f.api.post("/api/v1/boxes", {
      name: "devbox",
      short_description: "short",
      description: "# Title\n<b>x</b>",
      is_private: false,
    }, {
      token: alice,
    });
    const got = await f.api.get("/api/v1/box/alice/devbox");
    assertEquals(got.body.description, "# Title\n<b>x</b>");
    assertEquals(got.body.description_markdown, "# Title\n<b>x</b>");
    assertEquals(got.body.description_html, "<h1>Title</h1>\n<p>&lt;b&gt;x&lt;/b&gt;</p>\n");
    const keep = await f.api.put("/api/v1/box/alice/devbox", { box: { is_private: false } }, {
      token: alice,
    });
    assertEquals(keep.body.short_description, "short");
    assertEquals(keep.body.description, "# Title\n<b>x</b>");
    const clear = await f.api.put(
      "/api/v1/box/alice/devbox",
      { description: null, short_description: null },
      { token: alice },
    );
    assertEquals(clear.body.description, null);
    assertEquals(clear.body.short_description, null);
    assertEquals(clear.body.description_html, null);
    assertEquals(clear.body.private, true);
    const rename = await f.api.put("/api/v1/box/alice/devbox", { box: { name: "devbox2", private: false } }, {
      token: alice,
    });
    assertEquals(rename.status, 200);
    assertEquals(rename.body.tag, "alice/devbox2");
    assertEquals(rename.body.private, false);
    assertEquals((await f.api.get("/api/v1/box/alice/devbox")).status, 404);
    const owner = await f.api.put("/api/v1/box/alice/devbox2", { username: "bob" }, { token: alice });
    assertEquals(owner.status, 422);
    const long = await f.api.put("/api/v1/box/alice/devbox2", { short_description: "x".repeat(256) }, {
      token: alice,
    });
    assertEquals(long.status, 422);
    const del = await f.api.delete("/api/v1/box/alice/devbox2", { token: alice });
    assertEquals(del.status, 200);
    assertEquals(del.body.tag, "alice/devbox2");
    assertEquals((await f.api.get("/api/v1/box/alice/devbox2", { token: alice })).status, 404);
  },
);

registryTest("writes to another user's box are 403 when public and 404 when private", async (f) => {
  const alice = await createUser(f, "alice");
  const bob = await createUser(f, "bob");
  await f.api.post("/api/v1/boxes", { name: "public", is_private: false }, { token: bob });
  await f.api.post("/api/v1/boxes", { name: "secret" }, { token: bob });
  const pub = await f.api.put("/api/v1/box/bob/public", { short_description: "x" }, { token: alice });
  assertEquals(pub.status, 403);
  assertEquals(pub.body.errors, ["You are not allowed to modify boxes in namespace 'bob'!"]);
  assertEquals((await f.api.put("/api/v1/box/bob/secret", {}, { token: alice })).status, 404);
  assertEquals(
    (await f.api.post("/api/v1/boxes", { username: "bob", name: "mine" }, { token: alice })).status,
    403,
  );
  assertEquals(
    (await f.api.post("/api/v1/box/bob/public/versions", { version: "1.0.0" }, { token: alice })).status,
    403,
  );
  assertEquals((await f.api.delete("/api/v1/box/bob/public", { token: alice })).status, 403);
  assertEquals((await f.api.delete("/api/v1/box/bob/public", { token: f.admin })).status, 200);
});

registryTest("organization members write in the organization; delinquency blocks writes only", async (f) => {
  const alice = await createUser(f, "alice");
  const bob = await createUser(f, "bob");
  await createOrg(f, "acme", [{ username: "alice", role: "member" }]);
  const created = await f.api.post(
    "/api/v1/boxes",
    { username: "acme", name: "devbox", is_private: false },
    { token: alice },
  );
  assertEquals(created.status, 200, created.text);
  assertEquals(created.body.tag, "acme/devbox");
  assertEquals(
    (await f.api.post("/api/v1/boxes", { username: "acme", name: "x" }, { token: bob })).status,
    403,
  );
  // Members are managed by admins or owners only.
  assertEquals(
    (await f.api.put("/api/v1/admin/organizations/acme/members/bob", { role: "member" }, { token: alice }))
      .status,
    403,
  );
  await f.api.put("/api/v1/admin/organizations/acme/members/alice", { member: { role: "owner" } }, {
    token: f.admin,
  });
  const added = await f.api.put("/api/v1/admin/organizations/acme/members/bob", { role: "member" }, {
    token: alice,
  });
  assertEquals(added.status, 200, added.text);
  assertEquals(
    (await f.api.post("/api/v1/boxes", { username: "acme", name: "bobs" }, { token: bob })).status,
    200,
  );
  const removed = await f.api.delete("/api/v1/admin/organizations/acme/members/bob", { token: alice });
  assertEquals(removed.body.members, [{ username: "alice", role: "owner" }]);
  await f.api.put("/api/v1/admin/organizations/acme", { organization: { delinquent: true } }, {
    token: f.admin,
  });
  const blocked = await f.api.put("/api/v1/box/acme/devbox", { short_description: "x" }, { token: alice });
  assertEquals(blocked.status, 402);
  assertEquals(blocked.body.errors, ["Namespace 'acme' is delinquent on billing; writes are disabled!"]);
  assertEquals((await f.api.get("/api/v1/box/acme/devbox")).status, 200);
  assertEquals(
    (await f.api.put("/api/v1/box/acme/devbox", { is_private: false }, { token: f.admin })).status,
    200,
  );
});

registryTest(
  "deleting a namespace with boxes needs cascade, which emits BoxDeleted; the last admin stays",
  async (f) => {
    const alice = await createUser(f, "alice");
    await f.api.post("/api/v1/boxes", { name: "devbox" }, { token: alice });
    assertEquals((await f.api.delete("/api/v1/admin/users/alice", { token: f.admin })).status, 422);
    const gone = await f.api.delete("/api/v1/admin/users/alice?cascade=true", { token: f.admin });
    assertEquals(gone.status, 200, gone.text);
    assertEquals((await f.api.get("/api/v1/user/alice")).status, 404);
    assertEquals((await f.api.get("/api/v1/authenticate", { token: alice })).status, 401);
    const last = await f.api.delete("/api/v1/admin/users/admin", { token: f.admin });
    assertEquals(last.status, 422);
    const demote = await f.api.put("/api/v1/admin/users/admin", { admin: false }, { token: f.admin });
    assertEquals(demote.status, 422);
  },
);

registryTest(
  "GET /user lists visible boxes by name without versions; tokens are listed and revoked by admins",
  async (f) => {
    const alice = await createUser(f, "alice");
    await publishExternal(f, alice, "alice/zeta");
    await f.api.post("/api/v1/boxes", { name: "alpha" }, { token: alice });
    const mine = await f.api.get("/api/v1/user/alice", { token: alice });
    assertEquals(Object.keys(mine.body).sort(), [
      "avatar_url",
      "boxes",
      "profile_html",
      "profile_markdown",
      "username",
    ]);
    assertEquals(mine.body.boxes.map((b: { name: string }) => b.name), ["alpha", "zeta"]);
    assert(mine.body.boxes.every((b: Record<string, unknown>) => !("versions" in b)));
    const anon = await f.api.get("/api/v1/user/ALICE");
    assertEquals(anon.body.boxes.map((b: { name: string }) => b.name), ["zeta"]);
    const tokens = await f.api.get("/api/v1/admin/users/alice/tokens", { token: f.admin });
    assertEquals(tokens.body.tokens.length, 1);
    assert(tokens.body.tokens[0].last_used_at);
    const hash = tokens.body.tokens[0].token_hash;
    assertEquals(
      (await f.api.delete(`/api/v1/admin/users/alice/tokens/${hash}`, { token: f.admin })).status,
      204,
    );
    assertEquals((await f.api.get("/api/v1/authenticate", { token: alice })).status, 401);
  },
);
