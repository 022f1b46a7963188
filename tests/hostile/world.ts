// A seeded server for hostile traffic: an auth admin (bootstrap password), a Nomad management token (POST
// /v1/acl/bootstrap), resources of every kind, API snapshots to prove nothing changed, and a file-tree view
// to prove nothing was written outside the data dir.

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { Client, fastEnv, login, signInAdmin } from "../authmethods/helpers.ts";
import { marker } from "./arbitraries.ts";
import type { WorldIds } from "./targets.ts";
import { listTree } from "../helpers/files.ts";
import { withoutKeys } from "../helpers/values.ts";
import { testStorageEnv } from "../helpers/storage_backend.ts";

export interface World {
  server: TestServer;
  /** Temp dir holding victim.txt and l1/l2/l3/data (the data dir), so `../` escapes land where we look. */
  parent: string;
  victim: string;
  admin: Client;
  anon: Client;
  /** Nomad management SecretID. */
  management: string;
  /** A client token with node read only. */
  clientSecret: string;
  ids: WorldIds;
  /** Placeholder → a real id, for path templates. */
  valid: Record<string, string>;
  /** /tmp entries before the run whose names contain the marker (normally none). */
  tmpBefore: string[];
}

export const dataDirInParent = "l1/l2/l3/data";

async function must(c: Client, method: string, path: string, body?: unknown) {
  const r = await c.call(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function nomad(w: { server: TestServer }, token: string, method: string, path: string, body?: unknown) {
  const r = await fetch(w.server.url + path, {
    method,
    headers: { "X-Nomad-Token": token },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export async function markerEntriesInTmp(): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir("/tmp")) if (e.name.includes(marker)) found.push(e.name);
  return found.sort();
}

export async function openWorld(): Promise<World> {
  const tmpBefore = await markerEntriesInTmp();
  const parent = await Deno.makeTempDir({ prefix: "wharf-hostile-" });
  const victim = `${parent}/victim.txt`;
  await Deno.writeTextFile(victim, "outside the data dir\n");
  await Deno.mkdir(`${parent}/l1/l2/l3`, { recursive: true });
  // The data dir sits deep in a parent we watch; the storage is the one this run's WHARF_TEST_STORAGE names.
  const server = await startTestServer(
    { ...await testStorageEnv(), ...fastEnv },
    `${parent}/${dataDirInParent}`,
  );
  try {
    const { anon, admin, primaryMethodId: passwordMethod } = await signInAdmin(server.url);
    const oidc = await must(admin, "POST", "/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      name: "seed-oidc",
      attributes: {
        client_id: "cid",
        client_secret: "seed-client-secret",
        api_url_prefix: "https://wharf.example",
      },
    });
    const ldap = await must(admin, "POST", "/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      name: "seed-ldap",
      attributes: { urls: ["ldap://127.0.0.1:1"], bind_dn: "cn=x", bind_password: "seed-bind-password" },
    });
    const org = await must(admin, "POST", "/v1/scopes", { scope_id: "global", name: "seed-org" });
    const alice = await must(admin, "POST", "/v1/accounts", {
      auth_method_id: passwordMethod,
      attributes: { login_name: "alice", password: "alice-password-1" },
    });
    const aliceToken = await login(anon, passwordMethod, "alice", "alice-password-1");
    const aliceTokenId = aliceToken.slice(0, 13);
    const ldapGroup = await must(admin, "POST", "/v1/managed-groups", {
      auth_method_id: ldap.id,
      attributes: { group_names: ["seed-group"] },
    });
    const users = await must(admin, "GET", "/v1/users?scope_id=global");
    const aliceUserId: string = users.items.find((u: { login_name?: string }) => u.login_name === "alice").id;

    const boot = await fetch(server.url + "/v1/acl/bootstrap", { method: "POST" });
    if (boot.status !== 200) throw new Error(`acl bootstrap → ${boot.status} ${await boot.text()}`);
    const management: string = (await boot.json()).SecretID;
    const w = { server };
    await nomad(w, management, "PUT", "/v1/acl/policy/readnodes", {
      Name: "readnodes",
      Description: "node read",
      Rules: 'node { policy = "read" }',
    });
    const client = await nomad(w, management, "PUT", "/v1/acl/token", {
      Name: "seed-client",
      Type: "client",
      Policies: ["readnodes"],
    });
    const nodeId = crypto.randomUUID();
    await nomad(w, management, "PUT", "/v1/node/register", { Node: { ID: nodeId, Name: "seed-node" } });
    await nomad(w, management, "PUT", "/v1/jobs", { Job: { ID: "seed-job" } });

    const versions: Record<string, number> = {};
    for (
      const [id, path] of [
        [passwordMethod, `/v1/auth-methods/${passwordMethod}`],
        [oidc.id, `/v1/auth-methods/${oidc.id}`],
        [ldap.id, `/v1/auth-methods/${ldap.id}`],
        [org.id, `/v1/scopes/${org.id}`],
        [alice.id, `/v1/accounts/${alice.id}`],
        [aliceUserId, `/v1/users/${aliceUserId}`],
        [ldapGroup.id, `/v1/managed-groups/${ldapGroup.id}`],
      ] as const
    ) versions[id] = (await must(admin, "GET", path)).version;
    const ids: WorldIds = {
      passwordMethod,
      oidcMethod: oidc.id,
      ldapMethod: ldap.id,
      versions,
      org: org.id,
      aliceAccount: alice.id,
      aliceUser: aliceUserId,
      aliceToken: aliceTokenId,
      ldapGroup: ldapGroup.id,
      policy: "readnodes",
      clientAccessor: client.AccessorID,
      node: nodeId,
      job: "seed-job",
    };
    const valid: Record<string, string> = {
      method: passwordMethod,
      oidc: oidc.id,
      scope: org.id,
      account: alice.id,
      user: aliceUserId,
      authtoken: aliceTokenId,
      managedgroup: ldapGroup.id,
      policy: "readnodes",
      accessor: client.AccessorID,
      node: nodeId,
      job: "seed-job",
    };
    return {
      server,
      parent,
      victim,
      admin,
      anon,
      management,
      clientSecret: client.SecretID,
      ids,
      valid,
      tmpBefore,
    };
  } catch (err) {
    await server.stop();
    await Deno.remove(parent, { recursive: true }).catch(() => {});
    throw err;
  }
}

export async function closeWorld(world: World): Promise<void> {
  await world.server.stop();
  await Deno.remove(world.parent, { recursive: true }).catch(() => {});
}

/** Members that move without any write (list tokens embed the time; last-use times tick on reads). */
const volatile = new Set(["list_token", "approximate_last_used_time"]);

const stripVolatile = (value: unknown) => withoutKeys(value, volatile);

/** Everything the auth admin and the Nomad management token can read, as one comparable value. */
export async function snapshot(world: World): Promise<Record<string, unknown>> {
  const { ids } = world;
  const authPaths = [
    "/v1/auth-methods?scope_id=global&recursive=true",
    `/v1/auth-methods?scope_id=${ids.org}`,
    "/v1/scopes?scope_id=global",
    `/v1/accounts?auth_method_id=${ids.passwordMethod}`,
    `/v1/accounts?auth_method_id=${ids.ldapMethod}`,
    `/v1/accounts?auth_method_id=${ids.oidcMethod}`,
    "/v1/users?scope_id=global&recursive=true",
    `/v1/auth-methods/${ids.passwordMethod}`,
    `/v1/auth-methods/${ids.oidcMethod}`,
    `/v1/auth-methods/${ids.ldapMethod}`,
    `/v1/scopes/${ids.org}`,
    "/v1/scopes/global",
    `/v1/accounts/${ids.aliceAccount}`,
    `/v1/users/${ids.aliceUser}`,
    `/v1/auth-tokens/${ids.aliceToken}`,
  ];
  const out: Record<string, unknown> = {};
  for (const path of authPaths) {
    const r = await world.admin.get(path);
    out[`auth ${path}`] = { status: r.status, body: stripVolatile(r.body) };
  }
  const eventsPaths = [
    "/v1/acl/policies",
    "/v1/acl/policy/readnodes",
    "/v1/acl/tokens",
    `/v1/acl/token/${ids.clientAccessor}`,
    "/v1/nodes",
    `/v1/node/${ids.node}`,
    "/v1/jobs?namespace=*",
    `/v1/job/${ids.job}`,
  ];
  for (const path of eventsPaths) {
    const r = await fetch(world.server.url + path, { headers: { "X-Nomad-Token": world.management } });
    out[`events ${path}`] = { status: r.status, body: await r.text() };
  }
  return out;
}

/**
 * The file-system half of "nothing changed": outside the data dir the temp parent holds exactly what we put
 * there, no /tmp entry carries the marker sent in paths and values, and every file written inside the data
 * dir has a plain name (no `..`, no marker, no NUL). Returns the data dir listing for the caller's records.
 */
export async function assertFilesContained(
  world: World,
  check: (ok: boolean, message: string) => void,
): Promise<string[]> {
  const outside = await listTree(world.parent, dataDirInParent);
  check(
    JSON.stringify(outside) === JSON.stringify(["l1", "l1/l2", "l1/l2/l3", "victim.txt"]),
    `files appeared outside the data dir: ${JSON.stringify(outside)}`,
  );
  check(
    (await Deno.readTextFile(world.victim)) === "outside the data dir\n",
    "victim.txt outside the data dir was changed",
  );
  const tmp = await markerEntriesInTmp();
  check(JSON.stringify(tmp) === JSON.stringify(world.tmpBefore), `marker names appeared in /tmp: ${tmp}`);
  const inside = await listTree(`${world.parent}/${dataDirInParent}`);
  const odd = inside.filter((p) =>
    p.split("/").some((s) => s === ".." || s.includes(marker) || s.includes("\0"))
  );
  check(odd.length === 0, `odd names written in the data dir: ${JSON.stringify(odd)}`);
  return inside;
}

/**
 * Registers a hostile-traffic test: `steps` run against a fresh world, then two last steps prove that nothing
 * `observer` can see changed and that nothing was written outside the data dir; the world is always closed.
 */
export function hostileWorldTest(
  name: string,
  observer: string,
  steps: (t: Deno.TestContext, world: World) => Promise<void>,
): void {
  Deno.test({
    name,
    async fn(t) {
      const world = await openWorld();
      try {
        const before = await snapshot(world);
        await steps(t, world);
        await t.step(`nothing ${observer} can see changed`, async () => {
          assertEquals(await snapshot(world), before);
        });
        await t.step("nothing was written outside the data directory", async () => {
          await assertFilesContained(world, (ok, message) => assert(ok, message));
        });
      } finally {
        await closeWorld(world);
      }
    },
  });
}
