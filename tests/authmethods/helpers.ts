// Shared helpers for the auth-method integration tests: a server with cheap argon2 settings and a
// known admin password, a small JSON client, and login.

import { type OidcProviderFixture, wharfMethodAttributes } from "../fixtures/oidc_provider.ts";
import { assertEquals } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

export const adminPassword = "admin-password-1";

/** Cheap hashing keeps the suite fast; the parameters are still argon2id. */
export const fastEnv: Record<string, string> = {
  WHARF_INITIAL_ADMIN_PASSWORD: adminPassword,
  WHARF_ARGON2_TIME: "1",
  WHARF_ARGON2_MEMORY_KIB: "1024",
};

export interface ApiResponse {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  headers: Headers;
}

export class Client {
  constructor(readonly url: string, public token?: string) {}

  async call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> {
    const h = new Headers(headers);
    if (this.token && !h.has("Authorization")) h.set("Authorization", `Bearer ${this.token}`);
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h.set("Content-Type", "application/json");
    }
    const res = await fetch(this.url + path, { method, headers: h, body: payload, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // keep text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  get(path: string) {
    return this.call("GET", path);
  }
  post(path: string, body?: unknown) {
    return this.call("POST", path, body ?? {});
  }
  patch(path: string, body: unknown) {
    return this.call("PATCH", path, body);
  }
  delete(path: string) {
    return this.call("DELETE", path);
  }
}

export interface AuthFixture {
  server: TestServer;
  anon: Client;
  admin: Client;
  primaryMethodId: string;
  stop(): Promise<void>;
}

/** A server with the bootstrap admin logged in. */
export async function startAuthServer(env: Record<string, string> = {}): Promise<AuthFixture> {
  const server = await startTestServer({ ...fastEnv, ...env });
  return { server, ...await signInAdmin(server.url), stop: () => server.stop() };
}

/** At the server `url`: an anonymous client, the primary (password) method, and the bootstrap admin signed in. */
export async function signInAdmin(
  url: string,
): Promise<{ anon: Client; admin: Client; primaryMethodId: string }> {
  const anon = new Client(url);
  const listed = await anon.get("/v1/auth-methods?scope_id=global");
  if (listed.status !== 200) {
    throw new Error(`listing auth methods → ${listed.status} ${JSON.stringify(listed.body)}`);
  }
  const primaryMethodId: string = listed.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id;
  const admin = new Client(url, await login(anon, primaryMethodId, "admin", adminPassword));
  return { anon, admin, primaryMethodId };
}

/** Runs `fn` with a fresh auth fixture (startAuthServer) and stops it afterwards. */
export function withAuthServer(
  fn: (f: AuthFixture) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  return withStarted(() => startAuthServer(env), fn);
}

export async function login(
  c: Client,
  methodId: string,
  loginName: string,
  password: string,
): Promise<string> {
  const r = await c.post(`/v1/auth-methods/${methodId}:authenticate`, {
    attributes: { login_name: loginName, password },
  });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.attributes.token;
}

/** Creates a password account + logs it in; returns a client with its token. */
export async function makeUser(
  f: AuthFixture,
  loginName: string,
  methodId = f.primaryMethodId,
): Promise<{ client: Client; accountId: string }> {
  const r = await f.admin.post("/v1/accounts", {
    auth_method_id: methodId,
    attributes: { login_name: loginName, password: "user-password-1" },
  });
  if (r.status !== 200) throw new Error(`account create failed: ${r.status} ${JSON.stringify(r.body)}`);
  const token = await login(f.anon, methodId, loginName, "user-password-1");
  return { client: new Client(f.server.url, token), accountId: r.body.id };
}

/** The fewest attributes that create an (inactive) OIDC auth method. */
export const minimalOidcAttrs = {
  client_id: "client-1",
  client_secret: "secret-1",
  api_url_prefix: "https://wharf.example.com/",
};
/** The fewest attributes that create an (inactive) LDAP auth method. */
export const minimalLdapAttrs = { urls: ["ldap://127.0.0.1:389"] };

export function fieldNames(body: { details?: { request_fields?: Array<{ name: string }> } }): string[] {
  return (body.details?.request_fields ?? []).map((f) => f.name);
}

/**
 * Creates an OIDC method against the test provider `op` for the server at `apiUrlPrefix` (asserting the 200):
 * its id and version. `more` adds a name and attributes.
 */
export async function createOidcMethod(
  admin: Client,
  op: OidcProviderFixture,
  apiUrlPrefix: string,
  more: { name?: string; attributes?: Record<string, unknown> } = {},
): Promise<{ id: string; version: number }> {
  const created = await admin.post("/v1/auth-methods", {
    scope_id: "global",
    type: "oidc",
    ...(more.name === undefined ? {} : { name: more.name }),
    attributes: { ...wharfMethodAttributes(op, apiUrlPrefix), ...more.attributes },
  });
  assertEquals(created.status, 200, JSON.stringify(created.body));
  return { id: created.body.id as string, version: created.body.version as number };
}

/** createOidcMethod, then the method made active-public (asserting the 200): its id. */
export async function createActiveOidcMethod(
  admin: Client,
  op: OidcProviderFixture,
  apiUrlPrefix: string,
  more: { name?: string; attributes?: Record<string, unknown> } = {},
): Promise<string> {
  const { id, version } = await createOidcMethod(admin, op, apiUrlPrefix, more);
  const activated = await admin.post(`/v1/auth-methods/${id}:change-state`, {
    version,
    attributes: { state: "active-public" },
  });
  assertEquals(activated.status, 200, JSON.stringify(activated.body));
  return id;
}

/**
 * Every page of the list at `path` (with its query) from `token` on, or a fresh listing: the items and their
 * ids, removed_ids, how many pages, and the last list token (for a later refresh). Asserts each page's 200.
 */
export async function listEveryPage(
  get: (path: string) => Promise<{ status: number; body: Record<string, unknown> }>,
  path: string,
  token?: string,
) {
  const items: Array<Record<string, unknown>> = [];
  const removed: string[] = [];
  let next = token;
  let pages = 0;
  for (;;) {
    const r = await get(`${path}${next ? `&list_token=${next}` : ""}`);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    pages++;
    items.push(...((r.body.items ?? []) as Array<Record<string, unknown>>));
    removed.push(...((r.body.removed_ids ?? []) as string[]));
    next = String(r.body.list_token);
    if (r.body.response_type === "complete") {
      return { items, ids: items.map((i) => String(i.id)), removed, pages, token: next };
    }
  }
}

/** An ldap method `methodName` (its directory unreachable: nobody signs in) and a managed group of it. */
export async function createLdapGroup(
  admin: Client,
  methodName: string,
  group: { name?: string; groupName: string },
): Promise<{ methodId: string; groupId: string }> {
  const method = await admin.post("/v1/auth-methods", {
    scope_id: "global",
    type: "ldap",
    name: methodName,
    attributes: { urls: ["ldap://127.0.0.1:1"] },
  });
  assertEquals(method.status, 200, JSON.stringify(method.body));
  const made = await admin.post("/v1/managed-groups", {
    auth_method_id: method.body.id,
    ...(group.name ? { name: group.name } : {}),
    attributes: { group_names: [group.groupName] },
  });
  assertEquals(made.status, 200, JSON.stringify(made.body));
  return { methodId: method.body.id, groupId: made.body.id };
}
