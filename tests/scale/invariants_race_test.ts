// Invariants that need the cluster-wide lock, raced on two wharf nodes over one PostgreSQL database: the last
// registry admin and the last auth-method admin survive two admins removing each other on different nodes at the
// same instant, and a version released on one node while deleted on the other ends one way on both nodes.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, login } from "../authmethods/helpers.ts";
import { subscribe } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const rounds = 12;

/** Both nodes answer `read` with the same value, once the second has caught up with the first. */
async function agreed<T>(what: string, read: (node: number) => Promise<T>): Promise<T> {
  return await eventually(what, async () => {
    const [a, b] = [await read(0), await read(1)];
    return JSON.stringify(a) === JSON.stringify(b) ? a : undefined;
  });
}

clusterTest(
  "two nodes racing on the last admin and a version's lifecycle keep every invariant",
  { env: { WHARF_EVENTS_HEARTBEAT_MS: "200" } },
  async (cluster, t) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const registries = cluster.started.map((n) => new RegistryClient(n.url));

    await t.step("registry: two admins demoting or deleting each other on two nodes", async () => {
      const api = registries[0]!;
      const root = await api.login("admin", "admin-password-1");
      const passwordOf = (name: string) => `${name}-password`;
      const createAdmin = async (name: string, token: string) => {
        const r = await api.post("/api/v1/admin/users", {
          user: { username: name, email: `${name}@example.com`, password: passwordOf(name), admin: true },
        }, { token });
        assertEquals(r.status, 200, r.text);
        return await api.login(name, passwordOf(name));
      };
      const tokens: Record<string, string> = {
        r1: await createAdmin("r1", root),
        r2: await createAdmin("r2", root),
      };
      // From here on exactly r1 and r2 are admins.
      const demoteRoot = await api.put("/api/v1/admin/users/admin", { user: { admin: false } }, {
        token: tokens.r1,
      });
      assertEquals(demoteRoot.status, 200, demoteRoot.text);
      // What node `node` says the admins are, asked with `actor`'s token.
      const admins = (actor: string) => (node: number) =>
        registries[node]!.get("/api/v1/admin/users", { token: tokens[actor] }).then((r) => {
          assertEquals(r.status, 200, r.text);
          return (r.body.users as Array<{ username: string; admin: boolean }>).filter((u) => u.admin)
            .map((u) => u.username).sort();
        });
      // A token made on one node reaches the other a moment later: race only once both know both tokens.
      const tokensEverywhere = () =>
        Promise.all(["r1", "r2"].map((actor) => agreed(`${actor}'s token on both nodes`, admins(actor))));
      for (let round = 0; round < rounds; round++) {
        await tokensEverywhere();
        const deleting = round % 2 === 1;
        // r1's request removes r2 on one node while r2's removes r1 on the other.
        const remove = (node: number, target: string, actor: string) =>
          deleting
            ? registries[node]!.delete(`/api/v1/admin/users/${target}`, { token: tokens[actor] })
            : registries[node]!.put(`/api/v1/admin/users/${target}`, { user: { admin: false } }, {
              token: tokens[actor],
            });
        const answers = await Promise.all([
          remove(round % 2, "r2", "r1"),
          remove(1 - round % 2, "r1", "r2"),
        ]);
        const texts = JSON.stringify(answers.map((a) => [a.status, a.text]));
        assertEquals(answers.filter((a) => a.status === 200).length, 1, `round ${round}: ${texts}`);
        const loser = answers.find((a) => a.status !== 200)!;
        // 401 when the winner deleted the loser before the loser's request was authenticated: its token went
        // with its user.
        const refusals = deleting ? [401, 403, 422] : [403, 422];
        assert(refusals.includes(loser.status), `round ${round}: ${texts}`);
        if (loser.status === 422) {
          assert(/The last admin cannot be (demoted|deleted)/.test(loser.body.errors[0]), texts);
        }
        const survivor = answers[0]!.status === 200 ? "r1" : "r2";
        const removed = survivor === "r1" ? "r2" : "r1";
        const left = await agreed("the admins on both nodes", admins(survivor));
        assertEquals(left, [survivor], `round ${round}: ${texts}`);
        // The survivor restores the other one for the next round (on the other node).
        const back = registries[1 - round % 2]!;
        if (deleting) {
          const r = await back.post("/api/v1/admin/users", {
            user: {
              username: removed,
              email: `${removed}@example.com`,
              password: passwordOf(removed),
              admin: true,
            },
          }, { token: tokens[survivor] });
          assertEquals(r.status, 200, r.text);
          tokens[removed] = await back.login(removed, passwordOf(removed));
        } else {
          const r = await back.put(`/api/v1/admin/users/${removed}`, { user: { admin: true } }, {
            token: tokens[survivor],
          });
          assertEquals(r.status, 200, r.text);
        }
        assertEquals(await agreed("two admins again", admins(survivor)), ["r1", "r2"]);
      }
    });

    await t.step("auth methods: two admins demoting each other on two nodes", async () => {
      const anon = cluster.started.map((n) => new AuthClient(n.url));
      const methods = await anon[0]!.get("/v1/auth-methods?scope_id=global");
      const methodId = methods.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id as string;
      const first = new AuthClient(
        cluster.started[0]!.url,
        await login(anon[0]!, methodId, "admin", adminPassword),
      );
      const account = await first.post("/v1/accounts", {
        auth_method_id: methodId,
        attributes: { login_name: "second", password: "second-password" },
      });
      assertEquals(account.status, 200, JSON.stringify(account.body));
      /** The user of `loginName` as node one shows it to `reader` (an admin). */
      const userOf = async (loginName: string, reader = first) => {
        const users = await reader.get("/v1/users?scope_id=global");
        return users.body.items.find((u: { login_name?: string }) => u.login_name === loginName) as {
          id: string;
          version: number;
        };
      };
      const promote = await first.patch(`/v1/users/${(await userOf("second")).id}`, {
        version: (await userOf("second")).version,
        admin: true,
      });
      assertEquals(promote.status, 200, JSON.stringify(promote.body));
      const ids = { admin: (await userOf("admin")).id, second: (await userOf("second")).id };
      // Each admin acts on both nodes with its own token.
      const tokenOf = {
        admin: first.token!,
        second: await login(anon[0]!, methodId, "second", "second-password"),
      };
      const as = (node: number, who: "admin" | "second") =>
        new AuthClient(cluster.started[node]!.url, tokenOf[who]);
      // What node `node` says the admins are, asked with `actor`'s token (401 until the token reached it).
      const admins = (actor: "admin" | "second") => (node: number) =>
        as(node, actor).get("/v1/users?scope_id=global").then((r) =>
          r.status === 200
            ? (r.body.items as Array<{ login_name: string; admin?: boolean }>).filter((u) => u.admin)
              .map((u) => u.login_name).sort()
            : r.status
        );
      for (const actor of ["admin", "second"] as const) {
        assertEquals(await agreed(`${actor}'s token on both nodes`, admins(actor)), ["admin", "second"]);
      }
      for (let round = 0; round < rounds; round++) {
        const versions = await Promise.all([userOf("admin"), userOf("second")]);
        const answers = await Promise.all([
          as(round % 2, "admin").patch(`/v1/users/${ids.second}`, {
            version: versions[1]!.version,
            admin: false,
          }),
          as(1 - round % 2, "second").patch(`/v1/users/${ids.admin}`, {
            version: versions[0]!.version,
            admin: false,
          }),
        ]);
        const texts = JSON.stringify(answers.map((a) => [a.status, a.body]));
        assertEquals(answers.filter((a) => a.status === 200).length, 1, `round ${round}: ${texts}`);
        const loser = answers.find((a) => a.status !== 200)!;
        if (loser.status === 400) {
          assertEquals([loser.body.kind, loser.body.message], [
            "FailedPrecondition",
            "Cannot remove the last admin.",
          ]);
        } else assertEquals([loser.status, loser.body.kind], [403, "PermissionDenied"], texts);
        const survivor = answers[0]!.status === 200 ? "admin" : "second";
        const demoted = survivor === "admin" ? "second" : "admin";
        assertEquals(
          await agreed("the auth admins on both nodes", admins(survivor)),
          [survivor],
          `round ${round}`,
        );
        const again = await as(1 - round % 2, survivor).patch(`/v1/users/${ids[demoted]}`, {
          version: (await userOf(demoted, as(0, survivor))).version,
          admin: true,
        });
        assertEquals(again.status, 200, JSON.stringify(again.body));
        assertEquals(await agreed("two auth admins again", admins(survivor)), ["admin", "second"]);
      }
    });

    await t.step("a version released on one node while deleted on the other", async () => {
      // Its own owner (the bootstrap user, no longer an admin), whatever the steps before left.
      const token = await registries[0]!.login("admin", "admin-password-1");
      const box = await registries[0]!.post(
        "/api/v1/boxes",
        { box: { username: "admin", name: "lifecycle" } },
        {
          token,
        },
      );
      assertEquals(box.status, 200, box.text);
      const outcomes = new Set<string>();
      const expected: Record<string, string[]> = {};
      for (let round = 0; round < rounds; round++) {
        const v = `1.0.${round}`;
        const V = `/api/v1/box/admin/lifecycle/version/${v}`;
        const made = await registries[0]!.post("/api/v1/box/admin/lifecycle/versions", {
          version: { version: v },
        }, {
          token,
        });
        assertEquals(made.status, 200, made.text);
        const provider = await registries[0]!.post(`${V}/providers`, {
          provider: { name: "virtualbox", url: "https://files.example.com/devbox.box" },
        }, { token });
        assertEquals(provider.status, 200, provider.text);
        await eventually(
          "the version on node two",
          async () => (await registries[1]!.get(V, { token })).status === 200 ? true : undefined,
        );
        const [release, remove] = await Promise.all([
          registries[round % 2]!.put(`${V}/release`, undefined, { token }),
          registries[1 - round % 2]!.delete(V, { token }),
        ]);
        const texts = JSON.stringify([[release.status, release.text], [remove.status, remove.text]]);
        // Released then deleted, or deleted first (the release then finds nothing): never both half-done.
        assertEquals(remove.status, 200, texts);
        assert(release.status === 200 || release.status === 404, texts);
        outcomes.add(release.status === 200 ? "released, then deleted" : "deleted first");
        expected[`admin/lifecycle/${v}`] = release.status === 200
          ? ["VersionCreated", "VersionReleased", "VersionDeleted"]
          : ["VersionCreated", "VersionDeleted"];
        for (const api of registries) {
          const gone = await eventually(`${v} gone on ${api.url}`, async () => {
            const r = await api.get(V, { token });
            return r.status === 404 ? r : undefined;
          });
          assertEquals(gone.status, 404);
        }
      }
      const left = await agreed("no versions left", async (node) => {
        const r = await registries[node]!.get("/api/v1/box/admin/lifecycle", { token });
        return r.body.versions as unknown[];
      });
      assertEquals(left, []);
      // Both nodes stream each version's events as acknowledged: a release, if any, before the deletion.
      const streams = await Promise.all(cluster.started.map((n) => subscribe(n.url, "index=1&topic=Box")));
      const histories = await Promise.all(streams.map(async (stream) => {
        const frames = await stream.dataUntilQuiet(1500);
        await stream.close();
        const byVersion: Record<string, string[]> = {};
        for (const e of frames.flatMap((f) => f.Events ?? [])) {
          if (e.Type.startsWith("Version")) (byVersion[e.Key] ??= []).push(e.Type);
        }
        return byVersion;
      }));
      assertEquals(histories[0], expected);
      assertEquals(histories[1], expected);
      console.log(`release vs delete outcomes over ${rounds} rounds: ${[...outcomes].join(", ")}`);
    });
  },
);
