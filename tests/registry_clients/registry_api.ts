// Talks to a running wharf registry over HTTP: bootstraps users, an organization and tokens through the admin API
// (docs/registry.md#users-and-organizations-admin-api) and reads back what the server stored, for tests that check
// what real clients did.

import { startTestServer, type TestServer } from "../helpers/server.ts";
import { jsonOrUndefined } from "../helpers/values.ts";

export const ADMIN_PASSWORD = "admin-password-for-tests";

export interface ApiAnswer {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

export class RegistryApi {
  constructor(readonly baseUrl: string) {}

  async call(
    method: string,
    path: string,
    options: { token?: string; body?: unknown } = {},
  ): Promise<ApiAnswer> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return { status: response.status, body: jsonOrUndefined(text), text, headers: response.headers };
  }

  /** Like call, but throws with the server's answer unless the status is 2xx. */
  async expectOk(method: string, path: string, options: { token?: string; body?: unknown } = {}) {
    const answer = await this.call(method, path, options);
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`${method} ${path} → ${answer.status} ${answer.text.slice(0, 500)}`);
    }
    return answer.body as Record<string, unknown>;
  }

  async login(login: string, password: string, description = "tests"): Promise<string> {
    const body = await this.expectOk("POST", "/api/v1/authenticate", {
      body: { user: { login, password }, token: { description } },
    });
    const token = body.token;
    if (typeof token !== "string") throw new Error(`no token in ${JSON.stringify(body)}`);
    return token;
  }

  async createUser(adminToken: string, username: string, password: string): Promise<void> {
    await this.expectOk("POST", "/api/v1/admin/users", {
      token: adminToken,
      body: { user: { username, email: `${username.toLowerCase()}@example.test`, password } },
    });
  }

  async createOrganization(
    adminToken: string,
    name: string,
    members: Array<{ username: string; role: "owner" | "member" }>,
  ): Promise<void> {
    await this.expectOk("POST", "/api/v1/admin/organizations", {
      token: adminToken,
      body: { organization: { name, members } },
    });
  }
}

export interface Fixture {
  api: RegistryApi;
  adminToken: string;
  aliceToken: string;
  bobToken: string;
}

export const ALICE_PASSWORD = "alice-password-1";
export const BOB_PASSWORD = "bob-password-12";

/** admin (from WHARF_REGISTRY_ADMIN_PASSWORD), alice (owner of org acme) and bob (no org), with tokens. */
export async function bootstrapRegistry(baseUrl: string): Promise<Fixture> {
  const api = new RegistryApi(baseUrl);
  const adminToken = await api.login("admin", ADMIN_PASSWORD);
  await api.createUser(adminToken, "alice", ALICE_PASSWORD);
  await api.createUser(adminToken, "bob", BOB_PASSWORD);
  await api.createOrganization(adminToken, "acme", [{ username: "alice", role: "owner" }]);
  return {
    api,
    adminToken,
    aliceToken: await api.login("alice", ALICE_PASSWORD),
    bobToken: await api.login("bob", BOB_PASSWORD),
  };
}

/** Server settings for client tests: a known admin password and no rate limit in the way. */
export const clientTestEnv: Record<string, string> = {
  WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
  WHARF_RATE_LIMIT_RPS: "0",
};

/**
 * Runs `fn` with a server started with clientTestEnv, a client sandbox for it from `sandboxFor`, and the registry
 * bootstrapRegistry set up; the sandbox is removed and the server stopped after.
 */
export async function withClientServer<Sandbox extends { remove(): Promise<void> }>(
  sandboxFor: (serverUrl: string) => Promise<Sandbox>,
  fn: (server: TestServer, sandbox: Sandbox, registry: Fixture) => Promise<void>,
): Promise<void> {
  const server = await startTestServer(clientTestEnv);
  const sandbox = await sandboxFor(server.url);
  try {
    await fn(server, sandbox, await bootstrapRegistry(server.url));
  } finally {
    await sandbox.remove();
    await server.stop();
  }
}

interface StoredVersion {
  version: string;
  status: string;
  providers: Array<{ name: string; hosted: boolean }>;
}

/** The box as its owner sees it through the API (versions included). */
export async function readBox(api: RegistryApi, token: string, tag: string): Promise<{
  private: boolean;
  description: string | null;
  short_description: string | null;
  current_version: { version: string } | null;
  versions: StoredVersion[];
}> {
  return await api.expectOk("GET", `/api/v1/box/${tag}`, { token }) as never;
}
