// `wharf registry …` against a running server, and the offline admin password reset.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { type CliIo, runRegistryCli } from "../../cli/registry/mod.ts";
import { ADMIN_PASSWORD, Client, registryTest } from "./helpers.ts";

function io(env: Record<string, string>, stdin = "") {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    readStdin: () => Promise.resolve(stdin),
    promptPassword: () => Promise.resolve(undefined),
    env,
  };
  return { cli, out, err };
}

registryTest("the registry CLI manages users, organizations, maintenance and tokens", async (f) => {
  const env = { WHARF_SERVER: f.srv.url, WHARF_REGISTRY_TOKEN: f.admin };
  const create = io(env, "alice-password\n");
  assertEquals(
    await runRegistryCli(
      ["user", "create", "alice", "--email", "alice@example.com", "--password-stdin"],
      create.cli,
    ),
    0,
  );
  assertEquals(JSON.parse(create.out[0]!).username, "alice");
  await new Client(f.srv.url).login("alice", "alice-password");
  const noStdin = io(env);
  assertEquals(await runRegistryCli(["user", "create", "bob", "--email", "b@example.com"], noStdin.cli), 2);
  assertStringIncludes(noStdin.err[0]!, "--password-stdin");
  const org = io(env);
  assertEquals(await runRegistryCli(["org", "create", "acme", "--member", "alice:owner"], org.cli), 0);
  assertEquals(JSON.parse(org.out[0]!).members, [{ username: "alice", role: "owner" }]);
  const dup = io(env);
  assertEquals(await runRegistryCli(["org", "create", "ACME"], dup.cli), 1);
  assertEquals(dup.err, ["wharf registry: Name has already been taken"]);
  const on = io(env);
  assertEquals(await runRegistryCli(["maintenance", "on"], on.cli), 0);
  assertEquals(JSON.parse(on.out[0]!), { enabled: true, forced: false });
  assertEquals(await runRegistryCli(["maintenance", "off"], io(env).cli), 0);
  const token = io({ WHARF_SERVER: f.srv.url }, "alice-password");
  assertEquals(
    await runRegistryCli(["token", "create", "--login", "alice", "--password-stdin"], token.cli),
    0,
  );
  const created = JSON.parse(token.out[0]!);
  assert(created.token.startsWith("wharf_"));
  const list = io(env);
  assertEquals(await runRegistryCli(["token", "list", "alice"], list.cli), 0);
  assertEquals(JSON.parse(list.out[0]!).tokens.length, 2);
  assertEquals(await runRegistryCli(["token", "revoke", "alice", created.token_hash], io(env).cli), 0);
  assertEquals(
    (await new Client(f.srv.url).get("/api/v1/authenticate", { token: created.token })).status,
    401,
  );
  const unknown = io(env);
  assertEquals(await runRegistryCli(["frobnicate"], unknown.cli), 2);
});

Deno.test("admin reset-password works offline on a stopped server's data directory", async () => {
  const srv = await startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  await srv.stop({ keepData: true });
  // The server's storage settings without its bootstrap password: the command finds the admin wherever it lives.
  const { WHARF_REGISTRY_ADMIN_PASSWORD: _, ...storage } = srv.env;
  const reset = io(storage, "brand-new-password\n");
  assertEquals(
    await runRegistryCli(
      ["admin", "reset-password", "--data-dir", srv.dataDir, "--password-stdin"],
      reset.cli,
    ),
    0,
  );
  const again = await startTestServer(storage, srv.dataDir);
  try {
    await new Client(again.url).login("admin", "brand-new-password");
    const old = await new Client(again.url).post("/api/v1/authenticate", {
      user: { login: "admin", password: ADMIN_PASSWORD },
    });
    assertEquals(old.status, 401);
  } finally {
    await again.stop();
  }
});
