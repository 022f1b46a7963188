// The console's "one identity" pages through real HTTP on one started server (docs/web.md#directory-groups):
// an organization's directory groups (owners bind and remove, members do not see them, 422s on the page), the
// administrator groups, an admin user page's link and unlink (tokens revoked, lockout 422 and 409 on the
// page), and axe-core on those pages in Chromium.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { createLdapGroup, fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "../registry/helpers.ts";
import {
  browserSkipReason,
  clickAndWait,
  fill,
  launchBrowser,
  seriousViolations,
  WebClient,
} from "./helpers.ts";

Deno.test("console identity pages", async (t) => {
  const srv = await startTestServer({ ...fastEnv, WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  try {
    const api = new Client(srv.url);
    const admin = await api.login("admin", ADMIN_PASSWORD);
    const { admin: authAdmin, primaryMethodId: primary } = await signInAdmin(srv.url);
    const { groupId: mg } = await createLdapGroup(authAdmin, "Corp directory", {
      name: "box-publishers",
      groupName: "box-publishers",
    });
    for (const name of ["olive", "milo"]) {
      const r = await api.post("/api/v1/admin/users", {
        user: { username: name, email: `${name}@example.com`, password: `${name}-password-1` },
      }, { token: admin });
      assertEquals(r.status, 200, r.text);
    }
    const org = await api.post("/api/v1/admin/organizations", {
      organization: {
        name: "acme",
        members: [{ username: "olive", role: "owner" }, { username: "milo", role: "member" }],
      },
    }, { token: admin });
    assertEquals(org.status, 200, org.text);
    const bindings = "/api/v2/organization/acme/group-bindings";
    const SIGN_IN = "/api/v2/admin/sign-in-methods";

    await t.step("an owner binds and removes a directory group on the organization page", async () => {
      const owner = new WebClient(srv.url);
      assertEquals((await owner.signIn("olive", "olive-password-1")).status, 303);
      const before = await owner.get("/ui/orgs/acme");
      assert(before.text.includes("<h2>Directory groups</h2>"), before.text);
      assert(before.text.includes("No directory groups are bound."));
      assert(
        before.text.includes(`<option value="${mg}">box-publishers (Corp directory)</option>`),
        before.text,
      );

      const bad = await owner.postForm("/ui/orgs/acme/group-bindings", {
        managed_group_id: "mgldap_nothere1",
        role: "member",
      });
      assertEquals([bad.status, bad.headers.get("location")], [303, "/ui/orgs/acme"]);
      assert(
        (await owner.get("/ui/orgs/acme")).text.includes(
          "Managed group &#39;mgldap_nothere1&#39; does not exist",
        ),
      );
      const badRole = await owner.postForm("/ui/orgs/acme/group-bindings", {
        managed_group_id: mg,
        role: "admin",
      });
      assertEquals(badRole.status, 303);
      assert((await owner.get("/ui/orgs/acme")).text.includes("Role must be owner or member"));
      // A cross-site post is refused before anything is read.
      const cross = await owner.postForm("/ui/orgs/acme/group-bindings", {
        managed_group_id: mg,
        role: "owner",
      }, {
        "Sec-Fetch-Site": "cross-site",
      });
      assertEquals(cross.status, 403);
      assertEquals((await api.get(bindings, { token: admin })).body, { group_bindings: [] });

      const made = await owner.postForm("/ui/orgs/acme/group-bindings", {
        managed_group_id: mg,
        role: "owner",
      });
      assertEquals(made.status, 303);
      assertEquals((await api.get(bindings, { token: admin })).body, {
        group_bindings: [{ managed_group_id: mg, role: "owner" }],
      });
      const shown = await owner.get("/ui/orgs/acme");
      assert(shown.text.includes("Directory group bound."));
      const row = shown.text.match(
        /<td>box-publishers <code>[^<]*<\/code><\/td>\s*<td>([^<]*)<\/td>\s*<td>([^<]*)</,
      );
      assertEquals(row?.slice(1), ["Corp directory", "owner"], shown.text);

      const removed = await owner.postForm(`/ui/orgs/acme/group-bindings/${mg}/delete`, {});
      assertEquals(removed.status, 303);
      assertEquals((await api.get(bindings, { token: admin })).body, { group_bindings: [] });
      const gone = await owner.postForm(`/ui/orgs/acme/group-bindings/${mg}/delete`, {});
      assertEquals(gone.status, 303);
      assert((await owner.get("/ui/orgs/acme")).text.includes("Resource not found"));
    });

    await t.step("a member sees no directory groups and cannot bind one (the API's read rule)", async () => {
      const member = new WebClient(srv.url);
      assertEquals((await member.signIn("milo", "milo-password-1")).status, 303);
      const page = await member.get("/ui/orgs/acme");
      assertEquals(page.status, 200);
      assert(!page.text.includes("Directory groups"));
      assert(!page.text.includes(mg));
      const post = await member.postForm("/ui/orgs/acme/group-bindings", {
        managed_group_id: mg,
        role: "owner",
      });
      assertEquals(post.status, 303);
      assertEquals((await api.get(bindings, { token: admin })).body, { group_bindings: [] });
    });

    const web = new WebClient(srv.url);
    assertEquals((await web.signIn("admin", ADMIN_PASSWORD)).status, 303);

    await t.step("administrator groups are set and cleared on /ui/admin", async () => {
      const page = await web.get("/ui/admin");
      assert(page.text.includes("<h2>Administrator groups</h2>"));
      assert(page.text.includes(`name="admin_groups" value="${mg}">`), page.text);
      assertEquals((await web.postForm("/ui/admin/admin-groups", { admin_groups: mg })).status, 303);
      assertEquals((await api.get("/api/v2/admin/group-bindings", { token: admin })).body, {
        admin_groups: [mg],
      });
      const after = await web.get("/ui/admin");
      assert(after.text.includes("Administrator groups saved."));
      assert(new RegExp(`name="admin_groups" value="${mg}"\\s+checked\\s*>`).test(after.text), after.text);
      assertEquals((await web.postForm("/ui/admin/admin-groups", {})).status, 303);
      assertEquals((await api.get("/api/v2/admin/group-bindings", { token: admin })).body, {
        admin_groups: [],
      });
    });

    await t.step(
      "an admin user page links and unlinks (tokens revoked), 409 and lockout 422 on the page",
      async () => {
        // lee signs in through the primary password method: provisioned and linked to that person.
        const account = await authAdmin.post("/v1/accounts", {
          auth_method_id: primary,
          attributes: { login_name: "lee", password: "lee-password-1" },
        });
        assertEquals(account.status, 200, JSON.stringify(account.body));
        const leeToken = await api.login("lee", "lee-password-1");
        const person: string =
          (await api.get("/api/v2/admin/users/lee/identity", { token: admin })).body.identity
            .user_id;
        const page = await web.get("/ui/admin/users/lee");
        assertEquals(page.status, 200);
        assert(page.text.includes(`<code id="person-id">${person}</code>`), page.text);
        assert(page.text.includes("(password)"), page.text);
        assert(page.text.includes("Unlinking also revokes every API token of lee."));

        // olive cannot take lee's person: 409 on the page.
        const taken = await web.postForm("/ui/admin/users/olive/identity", { user_id: person });
        assertEquals([taken.status, taken.headers.get("location")], [303, "/ui/admin/users/olive"]);
        assert(
          (await web.get("/ui/admin/users/olive")).text.includes(
            `Auth-method user &#39;${person}&#39; is already linked to registry user &#39;lee&#39;`,
          ),
        );
        assertEquals((await api.get("/api/v1/authenticate", { token: leeToken })).status, 200);
        assertEquals((await web.postForm("/ui/admin/users/lee/identity/delete", {})).status, 303);
        assertEquals(
          (await api.get("/api/v2/admin/users/lee/identity", { token: admin })).body.identity,
          null,
        );
        assertEquals((await api.get("/api/v1/authenticate", { token: leeToken })).status, 401);
        const unlinked = await web.get("/ui/admin/users/lee");
        assert(
          unlinked.text.includes("lee unlinked; the user&#39;s API tokens were revoked."),
          unlinked.text,
        );
        assertEquals((await web.postForm("/ui/admin/users/lee/identity", { user_id: "" })).status, 303);
        assert((await web.get("/ui/admin/users/lee")).text.includes("User id can&#39;t be blank"));
        assertEquals((await web.postForm("/ui/admin/users/lee/identity", { user_id: person })).status, 303);
        assertEquals((await api.get("/api/v2/admin/users/lee/identity", { token: admin })).body.identity, {
          user_id: person,
        });

        // Only the primary method signs in, and admin signs in through it alone: unlinking admin locks out.
        assertEquals(
          (await api.get("/api/v2/admin/users/admin/identity", { token: admin })).body.identity !== null,
          true,
        );
        assertEquals((await api.put(SIGN_IN, { methods: [primary] }, { token: admin })).status, 200);
        assertEquals((await web.postForm("/ui/admin/users/admin/identity/delete", {})).status, 303);
        assert(
          (await web.get("/ui/admin/users/admin")).text.includes(
            "Unlinking &#39;admin&#39; would leave no registry administrator able to sign in",
          ),
        );
        assert(
          (await api.get("/api/v2/admin/users/admin/identity", { token: admin })).body.identity !== null,
        );
        assertEquals(
          (await api.put(SIGN_IN, { methods: ["registry", primary] }, { token: admin })).status,
          200,
        );
        // The list on /ui/admin names each auth method with its type; `registry` is no auth method.
        const primaryName = (await authAdmin.get(`/v1/auth-methods/${primary}`)).body.name;
        assert(
          (await web.get("/ui/admin")).text.includes(
            `<ol><li><code>registry</code></li><li><code>${primary}</code> (${primaryName}, password)</li></ol>`,
          ),
        );
        // Not for non-admins.
        const owner = new WebClient(srv.url);
        await owner.signIn("olive", "olive-password-1");
        assertEquals((await owner.get("/ui/admin/users/lee")).status, 403);
      },
    );

    await t.step({
      name: "axe-core finds no serious violation on the new sections (Chromium)",
      ignore: browserSkipReason() !== undefined,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        assertEquals(
          (await api.post(bindings, { managed_group_id: mg, role: "member" }, { token: admin })).status,
          200,
        );
        const { browser, close } = await launchBrowser();
        try {
          const page = await browser.newPage();
          await page.setBypassCSP(true);
          await page.goto(`${srv.url}/ui/login`, { waitUntil: "load" });
          await fill(page, "#login", "admin");
          await fill(page, "#password", ADMIN_PASSWORD);
          await clickAndWait(page, "main form button[type=submit]");
          for (const path of ["/ui/orgs/acme", "/ui/admin", "/ui/admin/users/lee", "/ui/admin/users/olive"]) {
            await page.goto(srv.url + path, { waitUntil: "load" });
            assertEquals(await seriousViolations(page), [], path);
          }
          const orgPage = await browser.newPage();
          await orgPage.goto(`${srv.url}/ui/orgs/acme`, { waitUntil: "load" });
          await orgPage.select("#bind-group", mg);
          await orgPage.select("#bind-role", "owner");
          await clickAndWait(orgPage, "#bind-role ~ * button, form[action$='/group-bindings'] button");
          assert((await orgPage.content()).includes("Directory group bound."));
        } finally {
          await close();
        }
      },
    });
  } finally {
    await srv.stop();
  }
});
