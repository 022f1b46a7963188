// The first-start bootstrap (generated or configured admin password) and its events
// (docs/auth-methods.md#first-start-the-admin, docs/auth-methods.md#events).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";
import { Client, login, startAuthServer } from "./helpers.ts";

async function stopChild(child: { kill(): void; status: Promise<Deno.CommandStatus> }) {
  child.kill();
  await child.status;
}

Deno.test("bootstrap prints a generated admin password once and it logs in; a restart prints nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-auth-boot-" });
  const env = { WHARF_ARGON2_TIME: "1", WHARF_ARGON2_MEMORY_KIB: "1024" };
  try {
    const first = await spawnServer(dir, env);
    try {
      const m = /auth method (ampw_[0-9A-Za-z]{10}), login name admin, password ([0-9A-Za-z]{24})/.exec(
        first.stdout(),
      );
      assert(m, first.stdout());
      const token = await login(new Client(first.url), m[1]!, "admin", m[2]!);
      assertMatch(token, /^at_/);
      assert(!first.stderr().includes(m[2]!), "the password is not in the log lines");
    } finally {
      await stopChild(first);
    }
    const second = await spawnServer(dir, env);
    try {
      assert(!/password/.test(second.stdout()), second.stdout());
    } finally {
      await stopChild(second);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bootstrap with WHARF_INITIAL_ADMIN_PASSWORD never prints it; a short one stops the start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-auth-boot-" });
  try {
    const env = {
      WHARF_ARGON2_TIME: "1",
      WHARF_ARGON2_MEMORY_KIB: "1024",
      WHARF_INITIAL_ADMIN_PASSWORD: "configured-pw-123",
    };
    const child = await spawnServer(dir, env);
    try {
      assert(!child.stdout().includes("configured-pw-123"));
      const methods = await new Client(child.url).get("/v1/auth-methods?scope_id=global");
      await login(new Client(child.url), methods.body.items[0].id, "admin", "configured-pw-123");
    } finally {
      await stopChild(child);
    }
    const fresh = await Deno.makeTempDir({ prefix: "wharf-auth-boot-" });
    const cmd = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../main.ts", import.meta.url).pathname,
        "--port",
        "0",
        "--data-dir",
        fresh,
      ],
      env: { WHARF_INITIAL_ADMIN_PASSWORD: "short" },
      stdout: "piped",
      stderr: "piped",
    });
    const out = await cmd.output();
    await Deno.remove(fresh, { recursive: true });
    assertEquals(out.code, 2);
    assert(new TextDecoder().decode(out.stderr).includes("WHARF_INITIAL_ADMIN_PASSWORD"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("each auth-method mutation appends one AuthMethod event without secrets", async () => {
  const f = await startAuthServer();
  try {
    const before = f.server.server.data.log.lastIndex;
    const c = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      name: "ev",
      attributes: { client_id: "c", client_secret: "very-secret-xyz", api_url_prefix: "https://x.example" },
    });
    await f.admin.patch(`/v1/auth-methods/${c.body.id}`, {
      version: 1,
      description: "d",
      attributes: { client_secret: "very-secret-abc" },
    });
    await f.admin.patch(`/v1/auth-methods/${c.body.id}`, {
      version: 2,
      attributes: { dry_run: true, max_age: 5 },
    });
    await f.admin.delete(`/v1/auth-methods/${c.body.id}`);
    const events = [];
    for await (const { index, line } of f.server.server.data.log.read(before + 1)) {
      const parsed = JSON.parse(line);
      for (const e of parsed.Events) events.push({ ...e, batch: index });
      if (parsed.Docs) {
        assert(
          !JSON.stringify(parsed.Docs).includes("very-secret"),
          "documents in the log hold sealed secrets only",
        );
      }
    }
    const methodEvents = events.filter((e) => e.Topic === "AuthMethod");
    assertEquals(methodEvents.map((e) => e.Type), [
      "AuthMethodCreated",
      "AuthMethodUpdated",
      "AuthMethodDeleted",
    ]);
    const admin = (await f.admin.get(`/v1/auth-tokens/${f.admin.token!.slice(0, 13)}`)).body.user_id;
    assertEquals(methodEvents[0].Payload, {
      AuthMethod: {
        id: c.body.id,
        scope_id: "global",
        type: "oidc",
        version: 1,
        actor_user_id: admin,
        name: "ev",
      },
    });
    assertEquals(methodEvents[1].Payload.AuthMethod.changed_fields, [
      "attributes.client_secret",
      "description",
    ]);
    assertEquals(methodEvents[1].Payload.AuthMethod.version, 2);
    assertEquals(methodEvents[0].Key, c.body.id);
    assertEquals(methodEvents[0].Namespace, "");
    assert(!JSON.stringify(events).includes("very-secret"));
    assert(!JSON.stringify(events).includes("_hmac"));
  } finally {
    await f.stop();
  }
});

Deno.test("debug logs carry no passwords, secrets or tokens", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-auth-logs-" });
  const env = {
    WHARF_ARGON2_TIME: "1",
    WHARF_ARGON2_MEMORY_KIB: "1024",
    WHARF_INITIAL_ADMIN_PASSWORD: "configured-pw-456",
  };
  const child = await spawnServer(dir, env, ["--log-level", "debug"]);
  try {
    const anon = new Client(child.url);
    const methodId = (await anon.get("/v1/auth-methods?scope_id=global")).body.items[0].id;
    const admin = new Client(child.url, await login(anon, methodId, "admin", "configured-pw-456"));
    await anon.post(`/v1/auth-methods/${methodId}:authenticate`, {
      attributes: { login_name: "admin", password: "wrong-pw-789" },
    });
    await admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: {
        urls: ["ldap://127.0.0.1:1"],
        state: "active-public",
        bind_dn: "cn=x",
        bind_password: "bind-secret-1",
      },
    });
    await admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { client_id: "c", client_secret: "client-secret-1", api_url_prefix: "https://x.example" },
    });
    await new Promise((r) => setTimeout(r, 200));
    const logs = child.stderr() + child.stdout();
    assert(logs.includes('"msg":"request"'), "debug logging is on");
    for (
      const secret of ["configured-pw-456", "wrong-pw-789", "bind-secret-1", "client-secret-1", admin.token!]
    ) {
      assert(!logs.includes(secret), `log leaks ${secret.slice(0, 6)}…`);
    }
  } finally {
    await stopChild(child);
    await Deno.remove(dir, { recursive: true });
  }
});
