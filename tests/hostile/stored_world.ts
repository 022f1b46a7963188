// A seeded wharf for stored hostile strings, run as a child process so that a panic (the process exiting)
// is seen and reported instead of taking the test runner down: registry boxes, tokens, an organization with a
// service principal, web console sessions, auth methods and an account, Nomad ACL policies, tokens and events.

import { spawnServer } from "../helpers/server.ts";
import { testStorageEnv } from "../helpers/storage_backend.ts";
import { Client, createActiveOidcMethod, fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { ALICE_PASSWORD, bootstrapRegistry, clientTestEnv } from "../registry_clients/registry_api.ts";
import { seedBoxes, type SeededRegistry } from "../registry_fuzz/fixture.ts";
import { WebClient } from "../console/helpers.ts";
import type { Liveness } from "./stored_strings.ts";
import { startOidcProvider } from "../fixtures/oidc_provider.ts";

export interface StoredWorld extends Liveness {
  seeded: SeededRegistry;
  /** The web console signed in as alice (owner of acme) and as the registry admin. */
  aliceWeb: WebClient;
  adminWeb: WebClient;
  /** The auth-method family's admin, and the ids of what it seeded. */
  authAdmin: Client;
  auth: {
    passwordMethod: string;
    oidcMethod: string;
    ldapMethod: string;
    org: string;
    account: string;
    managedGroup: string;
  };
  /** Nomad management SecretID and the seeded client token's AccessorID. */
  management: string;
  clientAccessor: string;
  stop(): Promise<void>;
}

async function ok(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${what} → ${response.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

async function must(c: Client, method: string, path: string, body?: unknown) {
  const r = await c.call(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function openStoredWorld(): Promise<StoredWorld> {
  const dataDir = await Deno.makeTempDir({ prefix: "wharf-stored-hostile-" });
  const child = await spawnServer(dataDir, { ...await testStorageEnv(), ...fastEnv, ...clientTestEnv });
  const exited = child.status.then((s) => s.code);
  // A real OpenID provider, so the OIDC method can be active and its callback answered (a 302 whose Location
  // is built from the method's api_url_prefix).
  const op = await startOidcProvider({
    redirectUris: [`${child.url}/v1/auth-methods/oidc:authenticate:callback`],
  });
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
    await op.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  };
  try {
    const seeded = await seedBoxes(await bootstrapRegistry(child.url));
    const { api, adminToken } = seeded;
    await api.expectOk("POST", "/api/v1/admin/organizations/acme/service-principals", {
      token: adminToken,
      body: { name: "seed-principal" },
    });
    const aliceWeb = new WebClient(child.url);
    const adminWeb = new WebClient(child.url);
    for (
      const [web, who, password] of [[aliceWeb, "alice", ALICE_PASSWORD], [
        adminWeb,
        "admin",
        "admin-password-for-tests",
      ]] as const
    ) {
      const answer = await web.signIn(who, password);
      if (answer.status !== 303) throw new Error(`console sign-in of ${who} → ${answer.status}`);
    }

    const { admin: authAdmin, primaryMethodId: passwordMethod } = await signInAdmin(child.url);
    const oidcMethod = await createActiveOidcMethod(authAdmin, op, child.url, { name: "seed-oidc" });
    const ldap = await must(authAdmin, "POST", "/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      name: "seed-ldap",
      attributes: { urls: ["ldap://127.0.0.1:1"] },
    });
    const org = await must(authAdmin, "POST", "/v1/scopes", { scope_id: "global", name: "seed-org" });
    const managedGroup = await must(authAdmin, "POST", "/v1/managed-groups", {
      auth_method_id: oidcMethod,
      attributes: { filter: '"/token/sub" == "seed"' },
    });
    const account = await must(authAdmin, "POST", "/v1/accounts", {
      auth_method_id: passwordMethod,
      attributes: { login_name: "carol", password: "carol-password-1" },
    });

    const boot = await ok(await fetch(child.url + "/v1/acl/bootstrap", { method: "POST" }), "acl bootstrap");
    const management = String(boot.SecretID);
    const nomad = (method: string, path: string, body: unknown) =>
      fetch(child.url + path, {
        method,
        headers: { "X-Nomad-Token": management },
        body: JSON.stringify(body),
      }).then((r) => ok(r, `${method} ${path}`));
    await nomad("PUT", "/v1/acl/policy/readnodes", { Name: "readnodes", Rules: 'node { policy = "read" }' });
    const client = await nomad("PUT", "/v1/acl/token", {
      Name: "seed",
      Type: "client",
      Policies: ["readnodes"],
    });
    return {
      url: child.url,
      exited,
      stderr: child.stderr,
      seeded,
      aliceWeb,
      adminWeb,
      authAdmin,
      auth: {
        passwordMethod,
        oidcMethod,
        ldapMethod: ldap.id,
        org: org.id,
        account: account.id,
        managedGroup: managedGroup.id,
      },
      management,
      clientAccessor: String(client.AccessorID),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
