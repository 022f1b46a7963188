// The index person → registry user (routes/registry/core/linked_users.ts) on two nodes of one database: each
// node's sign-ins and links see the links, unlinks, provisioning and deletes the other node made
// (docs/identity.md#provisioning).

import { assertEquals } from "../helpers/assert.ts";
import { signInAdmin } from "../authmethods/helpers.ts";
import { Client } from "../registry/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const adminPassword = "admin-password-1";

clusterTest(
  "sign-in on one node finds the registry user another node linked, unlinked or provisioned",
  {},
  async (
    cluster,
  ) => {
    const [one, two] = [await cluster.spawn("one"), await cluster.spawn("two")];
    const apiOne = new Client(one.url);
    const apiTwo = new Client(two.url);
    const admin = await apiOne.login("admin", adminPassword);
    const { admin: authAdmin, primaryMethodId: primary } = await signInAdmin(one.url);
    const account = await authAdmin.post("/v1/accounts", {
      auth_method_id: primary,
      attributes: { login_name: "dave", password: "dave-password-1" },
    });
    assertEquals(account.status, 200, JSON.stringify(account.body));
    /** dave's password sign-in on node two: the registry user it is, or the refusal's status. */
    const daveOnTwo = async () => {
      const r = await apiTwo.post("/api/v1/authenticate", {
        user: { login: "dave", password: "dave-password-1" },
      });
      if (r.status !== 200) return r.status;
      return (await apiTwo.get("/api/v1/authenticate", { token: r.body.token })).body.user.username as string;
    };
    const identity = (name: string) => `/api/v2/admin/users/${name}/identity`;

    // Node two provisions dave at his first sign-in (once his account reached it).
    await eventually(
      "dave provisioned on node two",
      async () => (await daveOnTwo()) === "dave" ? true : undefined,
    );
    const person = (await apiOne.get(identity("dave"), { token: admin })).body.identity.user_id as string;
    // Node one's links see that link: the person cannot be linked to a second registry user there.
    const builder = await apiOne.post("/api/v1/admin/users", {
      username: "builder",
      email: "builder@example.org",
      password: "builder-password-1",
    }, { token: admin });
    assertEquals(builder.status < 300, true, builder.text);
    const refused = await apiOne.put(identity("builder"), { user_id: person }, { token: admin });
    assertEquals([refused.status, refused.body.errors], [409, [
      `Auth-method user '${person}' is already linked to registry user 'dave'`,
    ]]);
    // Unlinked and linked to builder on node one: dave signs in as builder on node two.
    assertEquals((await apiOne.delete(identity("dave"), { token: admin })).status, 200);
    assertEquals((await apiOne.put(identity("builder"), { user_id: person }, { token: admin })).status, 200);
    assertEquals(await daveOnTwo(), "builder");
    // builder deleted on node one: node two would provision dave, whose name the unlinked dave holds (409).
    assertEquals((await apiOne.delete("/api/v1/admin/users/builder", { token: admin })).status, 200);
    assertEquals(await daveOnTwo(), 409);
    // Linked back on node one: dave again on node two.
    assertEquals((await apiOne.put(identity("dave"), { user_id: person }, { token: admin })).status, 200);
    assertEquals(await daveOnTwo(), "dave");
  },
);
