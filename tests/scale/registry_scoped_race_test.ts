// Registry writes that take a namespace's key (routes/registry/core/locks.ts) raced on two wharf nodes over one
// PostgreSQL database: one version number created on both nodes at once is taken once, a box deleted on one node
// while versions are created in it on the other stays deleted, and a box created in an organization while an
// admin deletes the organization (a global write) never outlives it.

import { assert, assertEquals } from "../helpers/assert.ts";
import { postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { type Answer, Client } from "../registry/helpers.ts";
import { fastEnv } from "../authmethods/helpers.ts";
import { rootSecret } from "../events/stream_helpers.ts";
import { eventually, Nodes, testRootKey } from "./helpers.ts";

if (postgresSkipReason) console.warn(`registry scoped race tests skipped: ${postgresSkipReason}`);
const rootKey = testRootKey(31);
const rounds = 20;
/** Requests each side sends at once per round (more overlap between the nodes' commits). */
const burst = 3;

const show = (answers: Answer[]) => JSON.stringify(answers.map((a) => [a.status, a.text.slice(0, 200)]));

Deno.test({
  name: "two nodes racing scoped registry writes keep versions unique, deleted boxes and namespaces deleted",
  ignore: postgresSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const pg = await startPostgres();
    const cluster = new Nodes();
    try {
      const env = {
        ...fastEnv,
        WHARF_DATABASE_URL: await pg.createDatabase(),
        WHARF_ROOT_KEY: rootKey,
        WHARF_REGISTRY_ADMIN_PASSWORD: "admin-password-1",
        WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
      };
      for (const name of ["one", "two"]) await cluster.spawn(name, env);
      const apis = cluster.started.map((n) => new Client(n.url));
      const admin = await apis[0]!.login("admin", "admin-password-1");
      const made = await apis[0]!.post("/api/v1/admin/users", {
        user: { username: "alice", email: "alice@example.com", password: "alice-password" },
      }, { token: admin });
      assertEquals(made.status, 200, made.text);
      const alice = await apis[0]!.login("alice", "alice-password");
      /** Waits until node `node` answers `path` (as `token`) with `status`. */
      const answers = (node: number, path: string, status: number, token = alice) =>
        eventually(
          `${path} answering ${status} on node ${node + 1}`,
          async () => (await apis[node]!.get(path, { token })).status === status ? true : undefined,
        );
      const onNodeTwo = (path: string, status: number, token = alice) => answers(1, path, status, token);
      /** Waits until both nodes answer `path` with `status` (the one that acknowledged a write at once). */
      const onBoth = async (path: string, status: number, token = alice) => {
        for (const node of [0, 1]) await answers(node, path, status, token);
      };
      const createBox = async (username: string, name: string) => {
        const r = await apis[0]!.post("/api/v1/boxes", { box: { username, name, is_private: false } }, {
          token: alice,
        });
        assertEquals(r.status, 200, r.text);
        await onNodeTwo(`/api/v1/box/${username}/${name}`, 200);
      };

      await t.step("one version number created on both nodes at once is taken once", async () => {
        await createBox("alice", "numbers");
        for (let round = 0; round < rounds; round++) {
          const number = `${round}.0.0`;
          const create = (node: number) =>
            apis[node]!.post("/api/v1/box/alice/numbers/versions", { version: { version: number } }, {
              token: alice,
            });
          const answers = await Promise.all(
            Array.from({ length: 2 * burst }, (_, i) => create((i + round) % 2)),
          );
          const texts = `round ${round}: ${show(answers)}`;
          assertEquals(answers.filter((a) => a.status === 200).length, 1, texts);
          for (const a of answers.filter((a) => a.status !== 200)) {
            assert(a.status === 409 || a.status === 422, texts);
            if (a.status === 422) assertEquals(a.body.errors, ["Version has already been taken"], texts);
          }
          // Both nodes list the number once (a lost update would keep one answer's version and drop the other's).
          const numbers = await eventually("both nodes' versions agree", async () => {
            const lists = await Promise.all(apis.map(async (api) => {
              const r = await api.get("/api/v1/box/alice/numbers", { token: alice });
              return (r.body.versions as Array<{ version: string }>).map((v) => v.version);
            }));
            return JSON.stringify(lists[0]) === JSON.stringify(lists[1]) ? lists[0] : undefined;
          });
          assertEquals(numbers.filter((v) => v === number).length, 1, texts);
          assertEquals(numbers.length, round + 1, texts);
        }
      });

      await t.step("a box deleted on one node while versions are created in it on the other", async () => {
        for (let round = 0; round < rounds; round++) {
          const name = `doomed-${round}`;
          await createBox("alice", name);
          const [remove, ...creates] = await Promise.all([
            apis[round % 2]!.delete(`/api/v1/box/alice/${name}`, { token: alice }),
            ...Array.from(
              { length: burst },
              (_, i) =>
                apis[1 - round % 2]!.post(`/api/v1/box/alice/${name}/versions`, {
                  version: { version: `1.0.${i}` },
                }, { token: alice }),
            ),
          ]);
          const texts = `round ${round}: ${show([remove!, ...creates])}`;
          assertEquals(remove!.status, 200, texts);
          // Created before the delete (then deleted with the box) or after it (404): never bringing it back.
          for (const c of creates) assert([200, 404, 409].includes(c.status), texts);
          await onBoth(`/api/v1/box/alice/${name}`, 404);
          await onBoth(`/api/v1/box/alice/${name}/version/1.0.0`, 404);
        }
      });

      await t.step(
        "boxes created in an organization while an admin deletes it on the other node",
        async () => {
          for (let round = 0; round < rounds; round++) {
            const org = `acme-${round}`;
            const created = await apis[0]!.post("/api/v1/admin/organizations", {
              organization: { name: org, members: [{ username: "alice", role: "owner" }] },
            }, { token: admin });
            assertEquals(created.status, 200, created.text);
            await onNodeTwo(`/api/v1/admin/organizations/${org}`, 200, admin);
            const [remove, ...creates] = await Promise.all([
              apis[round % 2]!.delete(`/api/v1/admin/organizations/${org}?cascade=true`, { token: admin }),
              ...Array.from({ length: burst }, (_, i) =>
                apis[1 - round % 2]!.post("/api/v1/boxes", {
                  box: { username: org, name: `box-${i}`, is_private: false },
                }, { token: alice })),
            ]);
            const texts = `round ${round}: ${show([remove!, ...creates])}`;
            assertEquals(remove!.status, 200, texts);
            // Before the deletion (then deleted with it), or after it: the namespace is gone (404, or 403 while
            // the creating node's view still had alice as a member and not yet the deletion).
            for (const c of creates) assert([200, 403, 404].includes(c.status), texts);
            await onBoth(`/api/v1/admin/organizations/${org}`, 404, admin);
            for (let i = 0; i < burst; i++) await onBoth(`/api/v1/box/${org}/box-${i}`, 404, admin);
          }
          // No box of a deleted organization is left anywhere (search lists every public box).
          for (const api of apis) {
            const found = await api.get("/api/v1/search?q=box-&limit=100", { token: admin });
            assertEquals(found.status, 200, found.text);
            const tags = (found.body.boxes as Array<{ tag: string }>).map((b) => b.tag);
            assertEquals(tags.filter((tag) => tag.startsWith("acme-")), [], JSON.stringify(tags));
          }
        },
      );
    } finally {
      await cluster.stop("SIGTERM");
      await pg.stop();
    }
  },
});
