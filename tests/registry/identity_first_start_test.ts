// One administrator at first start (docs/identity.md#one-administrator): a new data dir prints one password
// that signs in to the registry and the auth methods; WHARF_ADMIN_PASSWORD sets it, never printed; a data dir
// made by the release before (tests/fixtures/data/before_identity) keeps both administrators, every user,
// token and membership, and the registry's own sign-in only.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { Client as AuthClient, login as authLogin } from "../authmethods/helpers.ts";
import { Client } from "./helpers.ts";

/** Copies the directory tree `from` into `to` (files and folders only). */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

const cheap = { WHARF_ARGON2_TIME: "1", WHARF_ARGON2_MEMORY_KIB: "1024" };

async function primaryMethod(url: string): Promise<string> {
  const listed = await new AuthClient(url).get("/v1/auth-methods?scope_id=global");
  return listed.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id;
}

async function checkOneAdministrator(srv: TestServer, password: string) {
  const api = new Client(srv.url);
  const token = await api.login("admin", password);
  const primary = await primaryMethod(srv.url);
  const authAdmin = new AuthClient(
    srv.url,
    await authLogin(new AuthClient(srv.url), primary, "admin", password),
  );
  const users = await api.get("/api/v1/admin/users", { token });
  assertEquals(users.body.users.map((u: { username: string; admin: boolean }) => [u.username, u.admin]), [[
    "admin",
    true,
  ]]);
  assertEquals((await api.get("/api/v2/admin/sign-in-methods", { token })).body, {
    methods: ["registry", primary],
  });
  const link = await api.get("/api/v2/admin/users/admin/identity", { token });
  const person = await authAdmin.get(`/v1/users/${link.body.identity.user_id}`);
  assertEquals([person.status, person.body.login_name, person.body.admin], [200, "admin", true]);
}

Deno.test("a new data dir prints one administrator password, for the registry and the auth methods", async () => {
  let srv = await startTestServer(cheap);
  try {
    assertEquals(srv.announced.length, 1, srv.announced.join("\n"));
    const password = /login name admin, password (\S+) \(shown once; change it\); registry user "admin"/.exec(
      srv.announced[0]!,
    )![1]!;
    assertEquals(password.length, 24);
    await checkOneAdministrator(srv, password);
    srv = await srv.restart();
    assertEquals(srv.announced, []);
    assertEquals(
      (await new Client(srv.url).post("/api/v1/authenticate", {
        user: { login: "ADMIN", password },
      })).status,
      200,
    );
  } finally {
    await srv.stop();
  }
});

Deno.test("WHARF_ADMIN_PASSWORD sets the one administrator's password and is never printed", async () => {
  const srv = await startTestServer({ ...cheap, WHARF_ADMIN_PASSWORD: "the-one-password-1" });
  try {
    assert(!srv.announced.join("\n").includes("the-one-password-1"), srv.announced.join("\n"));
    await checkOneAdministrator(srv, "the-one-password-1");
  } finally {
    await srv.stop();
  }
});

Deno.test("a data dir from before keeps both administrators, every user, token and membership", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-upgrade-" });
  await copyTree(new URL("../fixtures/data/before_identity", import.meta.url).pathname, dir);
  await Deno.chmod(`${dir}/root.key`, 0o600);
  const srv = await startTestServer(cheap, dir);
  try {
    assertEquals(srv.announced, []);
    const api = new Client(srv.url);
    // The tokens the release before issued (tests/fixtures/data/README.md).
    const oldAdmin = "wharf_pjHMoqLlIzajeRr79tQzmnVZzGNoE8PN2uvTSk32OqE";
    const oldAlice = "wharf_d1scBy0QfbcAZrjIqO-a2ohMwcX34BUmYZUWcy5ei7U";
    assertEquals((await api.get("/api/v1/authenticate", { token: oldAdmin })).body, {
      user: { username: "admin" },
    });
    assertEquals((await api.get("/api/v1/authenticate", { token: oldAlice })).body, {
      user: { username: "alice" },
    });
    const admin = await api.login("admin", "registry-admin-old-1");
    assertEquals(await api.login("alice", "alice-old-password") !== "", true);
    const users = await api.get("/api/v1/admin/users", { token: admin });
    assertEquals(users.body.users.map((u: { username: string }) => u.username).sort(), ["admin", "alice"]);
    const acme = await api.get("/api/v1/admin/organizations/acme", { token: admin });
    assertEquals(acme.body.members, [{ username: "alice", role: "owner" }]);
    assertEquals((await api.get("/api/v1/box/acme/base", { token: oldAlice })).status, 200);
    assertEquals((await api.get("/api/v2/admin/sign-in-methods", { token: admin })).body, {
      methods: ["registry"],
    });
    assertEquals((await api.get("/api/v2/admin/users/admin/identity", { token: admin })).body, {
      username: "admin",
      identity: null,
    });
    // The auth methods' own administrator, with its own password; not a registry sign-in.
    const primary = await primaryMethod(srv.url);
    assertEquals(primary, "ampw_fXBlovuARk");
    await authLogin(new AuthClient(srv.url), primary, "admin", "auth-admin-old-1");
    assertEquals(
      (await api.post("/api/v1/authenticate", {
        user: { login: "admin", password: "auth-admin-old-1" },
      })).status,
      401,
    );
  } finally {
    await srv.stop();
  }
});
