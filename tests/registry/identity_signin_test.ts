// The registry's sign-in methods and password-style sign-in through the auth methods (docs/identity.md),
// through the HTTP API of one started server: the admin settings' 422 rules, sign-in through a password
// method with provisioning, linking, the collision refusal, one throttle failure per sign-in (and one count
// for every spelling an LDAP method takes for a name, against a real slapd), sessions bound to the person.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  adminPassword,
  createLdapGroup,
  fastEnv,
  minimalOidcAttrs,
  signInAdmin,
} from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { peopleDn, slapdSkipReason, startSlapd, users as ldapUsers } from "../fixtures/slapd.ts";

const SIGN_IN = "/api/v2/admin/sign-in-methods";

Deno.test("registry sign-in through the auth methods", async (t) => {
  // The server's log at debug level, access lines included: no password or token may be in any line.
  const logLines: string[] = [];
  const srv = await startTestServer(
    {
      ...fastEnv,
      WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      WHARF_REGISTRY_LOGIN_FAILURES: "3",
      // The auth methods' own throttles (per method and login name, per client address), low enough that a
      // registry sign-in charging them once per method tried would lock them (docs/identity.md).
      WHARF_LOGIN_LOCKOUT_THRESHOLD: "3",
      WHARF_IP_LOCKOUT_THRESHOLD: "4",
    },
    undefined,
    { logLines },
  );
  // Every token an answer handed out, for the log check.
  const issuedTokens: string[] = [];
  try {
    const api = new Client(srv.url);
    const admin = await api.login("admin", ADMIN_PASSWORD);
    // The auth methods' first admin (fastEnv's password) and the global primary method.
    const { anon, admin: authAdmin, primaryMethodId: primary } = await signInAdmin(srv.url);

    let plainToken = "";
    let otherMethod = "";
    await t.step("sign-in methods: the first start's, 422 rules, admins only", async () => {
      // A new data dir signs in through the registry's passwords and the global primary method.
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry", primary] });
      assertEquals((await api.put(SIGN_IN, { methods: ["registry"] }, { token: admin })).status, 200);
      const oidc = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "oidc",
        name: "Corp SSO",
        attributes: minimalOidcAttrs,
      });
      assertEquals(oidc.status, 200, JSON.stringify(oidc.body));
      const other = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "password",
        name: "other",
      });
      assertEquals(other.status, 200, JSON.stringify(other.body));
      otherMethod = other.body.id;
      const refused: [unknown, string][] = [
        [{}, "Methods can't be blank"],
        [{ methods: "registry" }, "Methods must be a list of sign-in method ids"],
        [{ methods: [] }, "Methods must name at least one sign-in method"],
        [{ methods: ["registry", 7] }, "Each sign-in method must be an auth-method id or registry"],
        [{ methods: ["registry", "amldap_nothere"] }, "Sign-in method 'amldap_nothere' does not exist"],
        [{ methods: ["registry", primary, "registry"] }, "Sign-in methods must not repeat: registry"],
        [
          { methods: ["registry", oidc.body.id] },
          `Sign-in method '${oidc.body.id}' is an OIDC method in state inactive; make it active-public or active-private`,
        ],
        [
          { methods: [otherMethod] },
          "No registry administrator could sign in through these methods; keep registry or add a method of a linked admin",
        ],
      ];
      for (const [body, message] of refused) {
        const r = await api.put(SIGN_IN, body, { token: admin });
        assertEquals([r.status, r.body], [422, { errors: [message], success: false }], JSON.stringify(body));
      }
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry"] });
      assertEquals((await api.get(SIGN_IN)).status, 401);
      const put = await api.put(SIGN_IN, { methods: ["registry", primary] }, { token: admin });
      assertEquals([put.status, put.body], [200, { methods: ["registry", primary] }]);
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry", primary] });
      const user = await api.post("/api/v1/admin/users", {
        user: { username: "plain", email: "plain@example.com", password: "plain-password-1" },
      }, { token: admin });
      assertEquals(user.status, 200, user.text);
      const plain = await api.login("plain", "plain-password-1");
      plainToken = plain;
      assertEquals((await api.get(SIGN_IN, { token: plain })).status, 403);
      assertEquals((await api.put(SIGN_IN, { methods: ["registry"] }, { token: plain })).status, 403);
    });

    await t.step("sign-in methods on the console's admin page, through the same service", async () => {
      const web = new WebClient(srv.url);
      assertEquals((await web.signIn("admin", ADMIN_PASSWORD)).status, 303);
      const page = await web.get("/ui/admin");
      assert(
        page.text.includes(
          `<code>${primary}</code> (Generated global scope initial password auth method, password)`,
        ),
      );
      const bad = await web.postForm("/ui/admin/sign-in-methods", { methods: otherMethod });
      assertEquals(bad.status, 303);
      assert((await web.get("/ui/admin")).text.includes("No registry administrator could sign in"));
      assertEquals((await web.postForm("/ui/admin/sign-in-methods", { methods: `registry` })).status, 303);
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry"] });
      assertEquals(
        (await web.postForm("/ui/admin/sign-in-methods", { methods: `registry, ${primary}` })).status,
        303,
      );
      assertEquals((await api.get(SIGN_IN, { token: admin })).body, { methods: ["registry", primary] });
    });

    const account = async (methodId: string, loginName: string, password: string) => {
      const r = await authAdmin.post("/v1/accounts", {
        auth_method_id: methodId,
        attributes: { login_name: loginName, password },
      });
      assertEquals(r.status, 200, JSON.stringify(r.body));
      return r.body.id as string;
    };
    const events = async () => {
      const out: { Topic: string; Type: string; Payload: { AuthToken: Record<string, unknown> } }[] = [];
      for await (const { line } of srv.server.data.log.read(1)) out.push(...JSON.parse(line).Events);
      return out;
    };
    const usernames = async () =>
      ((await api.get("/api/v1/admin/users", { token: admin })).body.users as { username: string }[]).map((
        u,
      ) => u.username).sort();
    const signIn = async (login: string, password: string, api2 = false) => {
      const r = await api.post(`/api/${api2 ? "v2" : "v1"}/authenticate`, { user: { login, password } });
      if (typeof r.body?.token === "string") issuedTokens.push(r.body.token);
      return r;
    };

    let wrenUser = "";
    await t.step("a password method's account signs in, provisioned once as wren-osei", async () => {
      const accountId = await account(primary, "wren.osei", "wren-password-1");
      const first = await signIn("wren.osei", "wren-password-1");
      assertEquals(first.status, 200, first.text);
      const who = await api.get("/api/v1/authenticate", { token: first.body.token });
      assertEquals(who.body, { user: { username: "wren-osei" } });
      const again = await signIn("wren.osei", "wren-password-1", true);
      assertEquals(again.status, 200, again.text);
      assertEquals((await usernames()).filter((u) => u.startsWith("wren")), ["wren-osei"]);
      const all = await events();
      const provisioned = all.filter((e) => e.Type === "RegistryUserProvisioned");
      assertEquals(provisioned.length, 1);
      wrenUser = provisioned[0]!.Payload.AuthToken.user_id as string;
      assertEquals(provisioned[0]!.Topic, "AuthToken");
      assertEquals(provisioned[0]!.Payload.AuthToken, {
        username: "wren-osei",
        user_id: wrenUser,
        account_id: accountId,
        auth_method_id: primary,
        auth_method_type: "password",
      });
      const signIns = all.filter((e) =>
        e.Type === "RegistrySignIn" && e.Payload.AuthToken.auth_method_id !== "registry"
      );
      assertEquals(
        signIns.map((e) => e.Payload.AuthToken),
        [1, 2].map(() => ({
          username: "wren-osei",
          auth_method_id: primary,
          auth_method_type: "password",
          user_id: wrenUser,
          account_id: accountId,
          client_ip: "127.0.0.1",
        })),
      );
      const person = await authAdmin.get(`/v1/users/${wrenUser}`);
      assertEquals(person.body.account_ids, [accountId]);
      const link = await api.get("/api/v2/admin/users/wren-osei/identity", { token: admin });
      assertEquals(link.body, { username: "wren-osei", identity: { user_id: wrenUser } });
      // Sign-ins with the registry's own passwords are events too (method `registry`, no account): admin's
      // (API and console) and plain's before, plain's now.
      const registrySignIns = () =>
        events().then((all) =>
          all.filter((e) => e.Type === "RegistrySignIn" && e.Payload.AuthToken.auth_method_id === "registry")
            .map((e) => e.Payload.AuthToken)
        );
      assertEquals((await registrySignIns()).map((p) => p.username), ["admin", "plain", "admin"]);
      assertEquals((await signIn("plain", "plain-password-1")).status, 200);
      assertEquals((await registrySignIns()).at(-1), {
        username: "plain",
        auth_method_id: "registry",
        auth_method_type: "registry",
        client_ip: "127.0.0.1",
      });
    });

    await t.step(
      "a username taken by another registry user refuses the sign-in and creates nothing",
      async () => {
        const made = await api.post("/api/v1/admin/users", {
          user: { username: "kai", email: "kai@example.com", password: "kai-registry-password" },
        }, { token: admin });
        assertEquals(made.status, 200, made.text);
        await account(primary, "kai", "kai-directory-password");
        const before = { users: await usernames(), events: (await events()).length };
        const refused = await signIn("kai", "kai-directory-password");
        const people = (await authAdmin.get("/v1/users?scope_id=global")).body.items as {
          id: string;
          login_name?: string;
        }[];
        const kaiUser = people.find((u) => u.login_name === "kai")!.id;
        assertEquals([refused.status, refused.body], [409, {
          errors: [
            "Sign-in refused: the username 'kai' is taken by another registry user. An administrator can link an " +
            `existing registry user to this person with PUT /api/v2/admin/users/USERNAME/identity {"user_id":"${kaiUser}"}`,
          ],
          success: false,
        }]);
        assertEquals(await usernames(), before.users);
        assertEquals((await events()).length, before.events);
        // The registry's own password of kai still signs in as kai.
        assertEquals((await signIn("kai", "kai-registry-password")).status, 200);

        const path = "/api/v2/admin/users/kai/identity";
        const put = (body: unknown, user = "kai") =>
          api.put(`/api/v2/admin/users/${user}/identity`, body, { token: admin });
        assertEquals((await put({})).status, 422);
        assertEquals((await put({ user_id: "u_nothere1" })).body.errors, [
          "Auth-method user 'u_nothere1' does not exist",
        ]);
        assertEquals((await put({ user_id: kaiUser }, "nobody")).status, 404);
        assertEquals((await put({ user_id: wrenUser })).body, {
          errors: [`Auth-method user '${wrenUser}' is already linked to registry user 'wren-osei'`],
          success: false,
        });
        assertEquals((await put({ user_id: kaiUser })).body, {
          username: "kai",
          identity: { user_id: kaiUser },
        });
        assertEquals((await put({ user_id: kaiUser })).status, 200);
        assertEquals((await put({ user_id: wrenUser })).status, 409);
        assertEquals((await api.put(path, { user_id: kaiUser }, { token: plainToken })).status, 403);
        const linked = await signIn("kai", "kai-directory-password");
        assertEquals(linked.status, 200, linked.text);
        assertEquals(
          (await api.get("/api/v1/authenticate", { token: linked.body.token })).body.user.username,
          "kai",
        );
        const gone = await api.delete(path, { token: admin });
        assertEquals(gone.body, { username: "kai", identity: null });
        const types = (await events()).map((e) => e.Type);
        assertEquals(types.filter((t) => t.startsWith("RegistryIdentity")), [
          "RegistryIdentityLinked",
          "RegistryIdentityUnlinked",
        ]);
        assertEquals((await signIn("kai", "kai-directory-password")).status, 409);
      },
    );

    await t.step("wrong passwords across three methods count once for the login throttles", async () => {
      const second = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "password",
        name: "second",
      });
      assertEquals(second.status, 200, JSON.stringify(second.body));
      // wren has an account in both auth methods: a wrong password is wrong on registry, primary and second.
      await account(second.body.id, "wren.osei", "wren-password-2");
      const put = await api.put(SIGN_IN, { methods: ["registry", primary, second.body.id] }, {
        token: admin,
      });
      assertEquals(put.status, 200, put.text);
      // WHARF_REGISTRY_LOGIN_FAILURES=3: two wrong sign-ins tried on three methods each are two failures.
      for (let i = 0; i < 2; i++) assertEquals((await signIn("wren.osei", "wrong-password")).status, 401);
      assertEquals((await signIn("wren.osei", "wren-password-1")).status, 200);
      // The third failure reaches the limit: the next sign-in is refused even with the right password.
      assertEquals((await signIn("wren.osei", "wrong-password")).status, 401);
      assertEquals((await signIn("wren.osei", "wren-password-1")).status, 429);
      // Three wrong sign-ins: counted per method they would be 3 failures on each method's name key
      // (threshold 3) and 6 on this address (threshold 4). The methods' own logins are not locked.
      for (const [method, password] of [[primary, "wren-password-1"], [second.body.id, "wren-password-2"]]) {
        const own = await anon.post(`/v1/auth-methods/${method}:authenticate`, {
          attributes: { login_name: "wren.osei", password },
        });
        assertEquals(own.status, 200, JSON.stringify(own.body));
        issuedTokens.push(own.body.attributes.token);
      }
      // The methods' throttles still count their own logins: three wrong passwords lock the name.
      for (let i = 0; i < 3; i++) {
        const wrong = await anon.post(`/v1/auth-methods/${second.body.id}:authenticate`, {
          attributes: { login_name: "wren.osei", password: "wrong-password" },
        });
        assertEquals(wrong.status, 401, JSON.stringify(wrong.body));
      }
      const locked = await anon.post(`/v1/auth-methods/${second.body.id}:authenticate`, {
        attributes: { login_name: "wren.osei", password: "wren-password-2" },
      });
      assertEquals(locked.status, 429, JSON.stringify(locked.body));
      // No password in the events, nor in plaintext anywhere in the data dir (log, documents, packs).
      const stored = [JSON.stringify(await events())];
      const walk = async (dir: string): Promise<void> => {
        for await (const e of Deno.readDir(dir)) {
          if (e.isDirectory) await walk(`${dir}/${e.name}`);
          else if (e.isFile) stored.push(new TextDecoder().decode(await Deno.readFile(`${dir}/${e.name}`)));
        }
      };
      await walk(srv.dataDir);
      const secrets = [
        "wren-password-1",
        "wren-password-2",
        "wrong-password",
        "kai-directory-password",
        ADMIN_PASSWORD,
      ];
      for (const secret of secrets) assert(!stored.some((text) => text.includes(secret)), secret);
      // Nor in any log line, nor a token any sign-in answered with (the log did record the sign-ins).
      assert(logLines.some((l) => l.includes("/api/v1/authenticate")), logLines.slice(-5).join("\n"));
      assert(issuedTokens.length >= 5, String(issuedTokens.length));
      for (const secret of [...secrets, ...issuedTokens, admin, plainToken, authAdmin.token!]) {
        const leaked = logLines.find((l) => l.includes(secret));
        assert(leaked === undefined, `a log line holds a secret: ${leaked}`);
      }
    });

    await t.step(
      "group bindings: org owners and admins bind managed groups; a deleted group's bindings go",
      async () => {
        const { groupId: mg } = await createLdapGroup(authAdmin, "directory", {
          groupName: "box-publishers",
        });
        const org = await api.post("/api/v1/admin/organizations", {
          organization: { name: "acme", members: [{ username: "plain", role: "owner" }] },
        }, { token: admin });
        assertEquals(org.status, 200, org.text);
        const path = "/api/v2/organization/acme/group-bindings";
        const kai = await api.login("kai", "kai-registry-password");
        assertEquals((await api.get(path)).status, 401);
        assertEquals((await api.get(path, { token: kai })).status, 403);
        assertEquals(
          (await api.post(path, { managed_group_id: mg, role: "member" }, { token: kai })).status,
          403,
        );
        const refused: [unknown, string][] = [
          [{ role: "member" }, "Managed group id can't be blank"],
          [{ managed_group_id: 5, role: "member" }, "Managed group id must be a managed group id"],
          [
            { managed_group_id: "mgldap_nothere1", role: "member" },
            "Managed group 'mgldap_nothere1' does not exist",
          ],
          [{ managed_group_id: mg, role: "admin" }, "Role must be owner or member"],
        ];
        for (const [body, message] of refused) {
          const r = await api.post(path, body, { token: plainToken });
          assertEquals(
            [r.status, r.body],
            [422, { errors: [message], success: false }],
            JSON.stringify(body),
          );
        }
        const made = await api.post(path, { managed_group_id: mg, role: "member" }, { token: plainToken });
        assertEquals([made.status, made.body], [200, {
          group_bindings: [{ managed_group_id: mg, role: "member" }],
        }]);
        const owner = await api.post(path, { managed_group_id: mg, role: "owner" }, { token: admin });
        assertEquals(owner.body, { group_bindings: [{ managed_group_id: mg, role: "owner" }] });
        assertEquals((await api.get(path, { token: admin })).body, owner.body);
        assertEquals((await api.delete(`${path}/mgldap_nothere1`, { token: admin })).status, 404);

        const admins = "/api/v2/admin/group-bindings";
        assertEquals((await api.get(admins, { token: admin })).body, { admin_groups: [] });
        assertEquals((await api.put(admins, { admin_groups: [mg] }, { token: plainToken })).status, 403);
        assertEquals((await api.put(admins, { admin_groups: mg }, { token: admin })).body.errors, [
          "Admin groups must be a list of managed group ids",
        ]);
        assertEquals((await api.put(admins, { admin_groups: [mg, mg] }, { token: admin })).body.errors, [
          "Admin groups must not repeat",
        ]);
        assertEquals((await api.put(admins, { admin_groups: [mg] }, { token: admin })).body, {
          admin_groups: [mg],
        });

        assertEquals((await authAdmin.delete(`/v1/managed-groups/${mg}`)).status, 200);
        for (let i = 0; i < 100 && (await api.get(path, { token: admin })).body.group_bindings.length; i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        assertEquals((await api.get(path, { token: admin })).body, { group_bindings: [] });
        assertEquals((await api.get(admins, { token: admin })).body, { admin_groups: [] });
        // Two bindings made, the admin groups set, then both removed with the group.
        const changes = (await events()).filter((e) => e.Type === "RegistryGroupBindingsChanged");
        assertEquals(changes.map((e) => e.Payload.AuthToken.actor), [
          "plain",
          "admin",
          "admin",
          "managed-group-deleted",
          "managed-group-deleted",
        ]);
      },
    );

    await t.step(
      "unlinking, demoting or deleting the last admin who could sign in is refused, as the sign-in list is",
      async () => {
        // admin signs in through the primary method (its person's account) or its registry password; ops
        // through its registry password only. Without registry in the list, admin alone can sign in.
        const ops = await api.post("/api/v1/admin/users", {
          user: { username: "ops", email: "ops@example.com", password: "ops-password-1", admin: true },
        }, { token: admin });
        assertEquals(ops.status, 200, ops.text);
        const put = await api.put(SIGN_IN, { methods: [primary] }, { token: admin });
        assertEquals([put.status, put.body], [200, { methods: [primary] }]);
        const lockout = (action: string) => ({
          errors: [
            `${action} would leave no registry administrator able to sign in through the sign-in methods; ` +
            "give another administrator a way to sign in first",
          ],
          success: false,
        });
        const unlink = await api.delete("/api/v2/admin/users/admin/identity", { token: admin });
        assertEquals([unlink.status, unlink.body], [422, lockout("Unlinking 'admin'")]);
        const demote = await api.put("/api/v1/admin/users/admin", { user: { admin: false } }, {
          token: admin,
        });
        assertEquals([demote.status, demote.body], [422, lockout("Demoting 'admin'")]);
        const remove = await api.delete("/api/v1/admin/users/admin", { token: admin });
        assertEquals([remove.status, remove.body], [422, lockout("Deleting 'admin'")]);
        // Nothing changed: admin still signs in through the primary method, as an administrator.
        const link = await api.get("/api/v2/admin/users/admin/identity", { token: admin });
        assert(String(link.body.identity?.user_id).startsWith("u_"), link.text);
        const again = await signIn("admin", adminPassword);
        assertEquals(again.status, 200, again.text);
        assertEquals((await api.get(SIGN_IN, { token: again.body.token })).status, 200);
        // With registry listed again ops can sign in, and admin may be demoted.
        assertEquals(
          (await api.put(SIGN_IN, { methods: ["registry", primary] }, { token: admin })).status,
          200,
        );
        const demoted = await api.put("/api/v1/admin/users/admin", { user: { admin: false } }, {
          token: admin,
        });
        assertEquals(demoted.status, 200, demoted.text);
        const opsToken = await api.login("ops", "ops-password-1");
        const restored = await api.put("/api/v1/admin/users/admin", { user: { admin: true } }, {
          token: opsToken,
        });
        assertEquals(restored.status, 200, restored.text);
      },
    );

    await t.step({
      name:
        "LDAP spellings of one name (full-width letters, as slapd matches them) share the throttle's count",
      ignore: slapdSkipReason !== undefined,
      fn: async () => {
        const ldap = await startSlapd();
        try {
          const method = await authAdmin.post("/v1/auth-methods", {
            scope_id: "global",
            type: "ldap",
            name: "slapd",
            attributes: {
              state: "active-public",
              urls: [ldap.ldapUrl],
              discover_dn: true,
              user_dn: peopleDn,
              user_attr: "uid",
            },
          });
          assertEquals(method.status, 200, JSON.stringify(method.body));
          const put = await api.put(SIGN_IN, { methods: ["registry", method.body.id] }, { token: admin });
          assertEquals(put.status, 200, put.text);
          const fullWidth = "\uFF41\uFF4C\uFF49\uFF43\uFF45"; // ａｌｉｃｅ: the directory's alice
          const mixed = "\uFF41lice";
          // The directory takes each spelling for alice (and a first sign-in provisions her).
          for (const name of ["alice", fullWidth, mixed]) {
            assertEquals((await signIn(name, ldapUsers.alice.password)).status, 200, name);
          }
          // Three wrong passwords lock alice (WHARF_REGISTRY_LOGIN_FAILURES=3), whatever the spelling.
          for (const name of ["alice", fullWidth, mixed]) {
            assertEquals((await signIn(name, "wrong-password")).status, 401, name);
          }
          for (const name of ["alice", fullWidth, mixed, "ALICE"]) {
            const locked = await signIn(name, ldapUsers.alice.password);
            assertEquals(locked.status, 429, `${name}: ${locked.text}`);
          }
        } finally {
          await ldap.stop();
        }
      },
    });

    await t.step("a console session ends when its registry user becomes another person's", async () => {
      const third = await authAdmin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
      assertEquals(third.status, 200, JSON.stringify(third.body));
      const put = await api.put(SIGN_IN, { methods: ["registry", primary, third.body.id] }, { token: admin });
      assertEquals(put.status, 200, put.text);
      await account(primary, "sam", "sam-password-a");
      await account(third.body.id, "sam", "sam-password-b");
      // Person A signs in to the console and is provisioned as sam.
      const web = new WebClient(srv.url);
      assertEquals((await web.signIn("sam", "sam-password-a")).status, 303);
      assertEquals((await web.get("/ui/settings/tokens")).status, 200);
      const first =
        (await api.get("/api/v2/admin/users/sam/identity", { token: admin })).body.identity.user_id;
      // sam is deleted; person B's first sign-in is provisioned as sam.
      assertEquals((await api.delete("/api/v1/admin/users/sam", { token: admin })).status, 200);
      assertEquals((await signIn("sam", "sam-password-b")).status, 200);
      const second =
        (await api.get("/api/v2/admin/users/sam/identity", { token: admin })).body.identity.user_id;
      assert(first !== second, `${first} ${second}`);
      // A's session is not B's: it ended with the registry user it was made for.
      assertEquals((await web.get("/ui/settings/tokens")).status, 303);
    });

    await t.step(
      "unlinking or relinking a registry user revokes its API tokens; a same-person PUT does not",
      async () => {
        const second = await authAdmin.post("/v1/auth-methods", { scope_id: "global", type: "password" });
        assertEquals(second.status, 200, JSON.stringify(second.body));
        const put = await api.put(SIGN_IN, { methods: ["registry", primary, second.body.id] }, {
          token: admin,
        });
        assertEquals(put.status, 200, put.text);
        await account(primary, "lin", "lin-password-a");
        const accountB = await account(second.body.id, "lin", "lin-password-b");
        const path = "/api/v2/admin/users/lin/identity";
        const whoIs = async (token: string) => (await api.get("/api/v1/authenticate", { token })).status;
        // Person A is provisioned as lin and holds two tokens.
        const tokenA1 = (await signIn("lin", "lin-password-a")).body.token as string;
        const tokenA2 = (await signIn("lin", "lin-password-a")).body.token as string;
        const personA = (await api.get(path, { token: admin })).body.identity.user_id as string;
        // Linking lin to the person it is linked to already changes nothing, revokes nothing.
        assertEquals((await api.put(path, { user_id: personA }, { token: admin })).status, 200);
        assertEquals([await whoIs(tokenA1), await whoIs(tokenA2)], [200, 200]);
        // Unlinking: A's tokens stop at once.
        assertEquals((await api.delete(path, { token: admin })).status, 200);
        assertEquals([await whoIs(tokenA1), await whoIs(tokenA2)], [401, 401]);
        // Relinking to A, and A's new token; then lin becomes person B's (unlink + link, as a PUT over
        // another person's link is 409): A's token does not act as B's lin.
        assertEquals((await api.put(path, { user_id: personA }, { token: admin })).status, 200);
        const tokenA3 = (await signIn("lin", "lin-password-a")).body.token as string;
        assertEquals(await whoIs(tokenA3), 200);
        assertEquals((await api.delete(path, { token: admin })).status, 200);
        // B's first sign-in is refused (lin is taken) and makes B's auth-method user; the admin links lin to B.
        assertEquals((await signIn("lin", "lin-password-b")).status, 409);
        const people = (await authAdmin.get("/v1/users?scope_id=global")).body.items as {
          id: string;
          account_ids?: string[];
        }[];
        const personB = people.find((p) => p.account_ids?.includes(accountB))!.id;
        assertEquals((await api.put(path, { user_id: personB }, { token: admin })).status, 200, personB);
        assertEquals(await whoIs(tokenA3), 401);
        const tokenB = (await signIn("lin", "lin-password-b")).body.token as string;
        assertEquals(await whoIs(tokenB), 200);
      },
    );
  } finally {
    await srv.stop();
  }
});
