// An organization's members through its bound directory groups (docs/identity.md#who-is-a-member), against a
// real slapd and one started server: the API's member listing and the console's organization page show a
// group-bound LDAP user who signed in with the group's role and how they hold it, one row with the higher role
// and both sources for a user who is also a direct member, direct members, pages; a user taken out of the group
// in slapd is gone after their next sign-in, and one who never signed in is not listed.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";
import { WebClient } from "../console/helpers.ts";
import * as directory from "../fixtures/slapd.ts";

const { groupsDn, peopleDn, users } = directory;

const MEMBERS = "/api/v2/organization/acme/members";
const publishersDn = `cn=box-publishers,${groupsDn}`;
const leadsDn = `cn=box-leads,${groupsDn}`;
const person = (uid: string) => ({ uid, dn: `uid=${uid},${peopleDn}`, password: `${uid}-password` });
const erin = person("erin"); // a direct member, and owner through cn=box-leads
const frank = person("frank"); // in cn=box-publishers, never signs in

function personLdif(p: { uid: string; dn: string; password: string }): string {
  return `dn: ${p.dn}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: ${p.uid}\ncn: ${p.uid}\nsn: ${p.uid}\n` +
    `mail: ${p.uid}@example.org\nuserPassword: ${p.password}\n\n`;
}

/** The rows of the console's members table: user, role, how (tags stripped). */
function memberRows(page: string): string[][] {
  const table = page.slice(
    page.indexOf("<h2>Members</h2>"),
    page.indexOf("</table>", page.indexOf("<h2>Members")),
  );
  return [...table.matchAll(/<tr><td>([\s\S]*?)<\/tr>/g)].map((m) =>
    [...`<td>${m[1]}`.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].slice(0, 3).map((c) =>
      c[1]!.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim()
    )
  );
}

Deno.test({
  name: "organization members through bound directory groups: API listing and console page",
  ignore: directory.slapdSkipReason !== undefined,
  async fn(t) {
    const ldap = await directory.startSlapd();
    const srv = await startTestServer({ ...fastEnv, WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
    try {
      await ldap.change(
        personLdif(erin) + personLdif(frank) +
          `dn: ${publishersDn}\nchangetype: add\nobjectClass: groupOfNames\ncn: box-publishers\n` +
          `member: ${users.alice.dn}\nmember: ${users.bob.dn}\nmember: ${frank.dn}\n\n` +
          `dn: ${leadsDn}\nchangetype: add\nobjectClass: groupOfNames\ncn: box-leads\nmember: ${erin.dn}\n`,
      );
      const api = new Client(srv.url);
      const admin = await api.login("admin", ADMIN_PASSWORD);
      const { admin: authAdmin, primaryMethodId: primary } = await signInAdmin(srv.url);
      const method = await authAdmin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "ldap",
        name: "Corp directory",
        attributes: directory.groupResolvingLdapAttributes(ldap),
      });
      assertEquals(method.status, 200, JSON.stringify(method.body));
      const group = async (name: string) => {
        const made = await authAdmin.post("/v1/managed-groups", {
          auth_method_id: method.body.id,
          name,
          attributes: { group_names: [name] },
        });
        assertEquals(made.status, 200, JSON.stringify(made.body));
        return made.body.id as string;
      };
      const [publishers, leads] = [await group("box-publishers"), await group("box-leads")];
      const put = await api.put("/api/v2/admin/sign-in-methods", {
        methods: ["registry", primary, method.body.id],
      }, { token: admin });
      assertEquals(put.status, 200, put.text);
      const dave = await api.post("/api/v1/admin/users", {
        user: { username: "dave", email: "dave@example.com", password: "dave-password" },
      }, { token: admin });
      assertEquals(dave.status, 200, dave.text);
      const org = await api.post("/api/v1/admin/organizations", {
        organization: { name: "acme", members: [{ username: "dave", role: "member" }] },
      }, { token: admin });
      assertEquals(org.status, 200, org.text);
      for (const [id, role] of [[publishers, "member"], [leads, "owner"]]) {
        const bound = await api.post("/api/v2/organization/acme/group-bindings", {
          managed_group_id: id,
          role,
        }, {
          token: admin,
        });
        assertEquals(bound.status, 200, bound.text);
      }
      // alice, bob and erin sign in through the directory (provisioned); alice and erin become direct members.
      const tokens: Record<string, string> = {};
      for (const p of [users.alice, users.bob, erin]) tokens[p.uid] = await api.login(p.uid, p.password);
      for (const [who, role] of [["alice", "owner"], ["erin", "member"]]) {
        const added = await api.put(`/api/v1/admin/organizations/acme/members/${who}`, { role }, {
          token: admin,
        });
        assertEquals(added.status, 200, added.text);
      }
      const viaPublishers = {
        type: "group",
        role: "member",
        group_name: "box-publishers",
        auth_method_name: "Corp directory",
        managed_group_id: publishers,
        auth_method_id: method.body.id,
      };
      const viaLeads = { ...viaPublishers, role: "owner", group_name: "box-leads", managed_group_id: leads };

      await t.step(
        "the API lists direct and group members with their sources, the higher role once",
        async () => {
          const listed = await api.get(MEMBERS, { token: admin });
          assertEquals(listed.status, 200, listed.text);
          assertEquals(listed.body, {
            members: [
              {
                username: "alice",
                role: "owner",
                sources: [{ type: "direct", role: "owner" }, viaPublishers],
              },
              { username: "bob", role: "member", sources: [viaPublishers] },
              { username: "dave", role: "member", sources: [{ type: "direct", role: "member" }] },
              { username: "erin", role: "owner", sources: [{ type: "direct", role: "member" }, viaLeads] },
            ],
            page: 1,
            limit: 100,
            total: 4,
          });
          // The owner through the group sees the same; the organization's stored members stay the direct ones.
          assertEquals((await api.get(MEMBERS, { token: tokens.erin })).body, listed.body);
          const stored = await api.get("/api/v1/admin/organizations/acme", { token: admin });
          assertEquals(stored.body.members, [
            { username: "dave", role: "member" },
            { username: "alice", role: "owner" },
            { username: "erin", role: "member" },
          ]);
        },
      );

      await t.step("pages, bad pages, plain members without ids, outsiders 404", async () => {
        const names = async (q: string) =>
          ((await api.get(`${MEMBERS}?${q}`, { token: admin })).body.members as { username: string }[])
            .map((m) => m.username);
        assertEquals(await names("limit=3"), ["alice", "bob", "dave"]);
        assertEquals(await names("limit=3&page=2"), ["erin"]);
        assertEquals(await names("limit=3&page=3"), []);
        const bad = await api.get(`${MEMBERS}?limit=0&page=x`, { token: admin });
        assertEquals([bad.status, bad.body], [422, {
          errors: ["Limit must be an integer of at least 1", "Page must be an integer of at least 1"],
          success: false,
        }]);
        const bobView = await api.get(`${MEMBERS}?limit=1`, { token: tokens.bob });
        assertEquals(bobView.body.members, [{
          username: "alice",
          role: "owner",
          sources: [{ type: "direct", role: "owner" }, {
            type: "group",
            role: "member",
            group_name: "box-publishers",
            auth_method_name: "Corp directory",
          }],
        }]);
        const outsider = await api.post("/api/v1/admin/users", {
          user: { username: "olga", email: "olga@example.com", password: "olga-password" },
        }, { token: admin });
        assertEquals(outsider.status, 200, outsider.text);
        const olga = await api.login("olga", "olga-password");
        for (const [token, status] of [[olga, 404], [undefined, 401]] as const) {
          const answer = await api.get(MEMBERS, { token });
          assertEquals([answer.status, answer.body.success], [status, false], answer.text);
        }
        assertEquals((await api.get("/api/v2/organization/nothere/members", { token: admin })).status, 404);
      });

      await t.step("the console's organization page shows them and how", async () => {
        const web = new WebClient(srv.url);
        assertEquals((await web.signIn("erin", erin.password)).status, 303);
        const page = await web.get("/ui/orgs/acme");
        assertEquals(page.status, 200);
        assertEquals(memberRows(page.text), [
          ["alice", "owner", "direct (owner); via group box-publishers of Corp directory (member)"],
          ["bob", "member", "via group box-publishers of Corp directory (member)"],
          ["dave", "member", "direct (member)"],
          ["erin", "owner", "direct (member); via group box-leads of Corp directory (owner)"],
        ]);
        assert(page.text.includes("signed in since they joined it"), "the page says who can be listed");
        // A page past the end is empty; a page that is not one is the service's 422, never a 500.
        assertEquals(memberRows((await web.get("/ui/orgs/acme?page=2")).text), []);
        const badPage = await web.get("/ui/orgs/acme?page=0");
        assertEquals(badPage.status, 422);
        assert(badPage.text.includes("Page must be an integer of at least 1"), badPage.text);
        // bob, a member through the group, sees the list too, without the management forms.
        const bobWeb = new WebClient(srv.url);
        assertEquals((await bobWeb.signIn("bob", users.bob.password)).status, 303);
        const bobPage = await bobWeb.get("/ui/orgs/acme");
        assertEquals(memberRows(bobPage.text).map((r) => r[0]), ["alice", "bob", "dave", "erin"]);
        assert(!bobPage.text.includes("/members/dave/delete"), "no management forms for a plain member");
      });

      await t.step("taken out of the group in slapd, bob is gone after his next sign-in", async () => {
        await ldap.change(
          `dn: ${publishersDn}\nchangetype: modify\ndelete: member\nmember: ${users.bob.dn}\n`,
        );
        // Until he signs in again, his last sign-in's groups stand (Boundary's semantics).
        const before = await api.get(MEMBERS, { token: admin });
        assert(before.body.members.some((m: { username: string }) => m.username === "bob"));
        await api.login("bob", users.bob.password);
        const after = await api.get(MEMBERS, { token: admin });
        assertEquals(after.body.members.map((m: { username: string }) => m.username), [
          "alice",
          "dave",
          "erin",
        ]);
        assertEquals(after.body.total, 3);
        const web = new WebClient(srv.url);
        assertEquals((await web.signIn("admin", ADMIN_PASSWORD)).status, 303);
        assertEquals(memberRows((await web.get("/ui/orgs/acme")).text).map((r) => r[0]), [
          "alice",
          "dave",
          "erin",
        ]);
      });

      await t.step("a group or method without a name shows no id to a plain member", async () => {
        // Ids are what the admin endpoints take; a plain member gets 403 from the bindings API that shows them.
        for (const path of [`/v1/auth-methods/${method.body.id}`, `/v1/managed-groups/${publishers}`]) {
          const current = await authAdmin.get(path);
          const cleared = await authAdmin.patch(path, { version: current.body.version, name: null });
          assertEquals(cleared.status, 200, JSON.stringify(cleared.body));
          assertEquals(cleared.body.name, undefined);
        }
        const dave = await api.login("dave", "dave-password");
        const listed = await api.get(MEMBERS, { token: dave });
        assertEquals(listed.body.members[0].sources[1], {
          type: "group",
          role: "member",
          group_name: "unnamed group",
          auth_method_name: "unnamed auth method",
        });
        const web = new WebClient(srv.url);
        assertEquals((await web.signIn("dave", "dave-password")).status, 303);
        const page = await web.get("/ui/orgs/acme");
        for (const id of [publishers, leads, method.body.id]) {
          assert(!listed.text.includes(id) && !page.text.includes(id), `${id} shown to a plain member`);
        }
        assertEquals(memberRows(page.text)[0], [
          "alice",
          "owner",
          "direct (owner); via group unnamed group of unnamed auth method (member)",
        ]);
        // An admin still sees which group it is.
        const adminView = await api.get(MEMBERS, { token: admin });
        assertEquals(adminView.body.members[0].sources[1].group_name, publishers);
      });
    } finally {
      await srv.stop();
      await ldap.stop();
    }
  },
});
