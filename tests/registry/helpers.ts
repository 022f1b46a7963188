// Helpers for the registry's HTTP tests: a started server with an admin token, and a small JSON client.

import { startTestServer, type TestServer } from "../helpers/server.ts";
import { assertEquals } from "../helpers/assert.ts";
import { testWithSettings } from "../helpers/fixture.ts";
import { jsonOrUndefined } from "../helpers/values.ts";

export const ADMIN_PASSWORD = "admin-password-1";

export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export class Client {
  readonly url: string;
  constructor(url: string) {
    this.url = url;
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    let body: BodyInit | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["Content-Type"] ??= "application/json";
    }
    const response = await fetch(this.url + path, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: jsonOrUndefined(text), text };
  }

  get(path: string, options?: CallOptions) {
    return this.call("GET", path, options);
  }
  post(path: string, body: unknown, options: CallOptions = {}) {
    return this.call("POST", path, { ...options, body });
  }
  put(path: string, body: unknown, options: CallOptions = {}) {
    return this.call("PUT", path, { ...options, body });
  }
  delete(path: string, options?: CallOptions) {
    return this.call("DELETE", path, options);
  }

  async login(login: string, password: string, extra: Record<string, unknown> = {}): Promise<string> {
    const a = await this.post("/api/v1/authenticate", { user: { login, password }, ...extra });
    assertEquals(a.status, 200, a.text);
    return a.body.token as string;
  }
}

export interface Fixture {
  srv: TestServer;
  api: Client;
  admin: string;
  stop(): Promise<void>;
}

/** A server with a known admin password and an admin token. */
export async function startRegistry(env: Record<string, string> = {}): Promise<Fixture> {
  const srv = await startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD, ...env });
  const api = new Client(srv.url);
  const admin = await api.login("admin", ADMIN_PASSWORD);
  return { srv, api, admin, stop: () => srv.stop() };
}

/** Registers a Deno.test that runs with a fresh registry (`env` adds WHARF_* settings), always stopped after. */
export const registryTest = testWithSettings((env?: Record<string, string>) => startRegistry(env));

/** Creates a user through the admin API and returns a token for it. */
export async function createUser(
  f: Fixture,
  username: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const password = `${username}-password`;
  const a = await f.api.post("/api/v1/admin/users", {
    user: { username, email: `${username}@example.com`, password, ...extra },
  }, { token: f.admin });
  assertEquals(a.status, 200, a.text);
  // Two-factor users need a code to log in: the caller does that.
  return extra.two_factor_enabled ? "" : await f.api.login(username, password);
}

export async function createOrg(f: Fixture, name: string, members: { username: string; role: string }[]) {
  const a = await f.api.post("/api/v1/admin/organizations", { organization: { name, members } }, {
    token: f.admin,
  });
  assertEquals(a.status, 200, a.text);
}

/** Box → version → provider with an external url, released. */
export async function publishExternal(
  f: Fixture,
  token: string,
  tag: string,
  version = "1.0.0",
  options: { isPrivate?: boolean; provider?: string } = {},
) {
  const [username, name] = tag.split("/");
  const existing = await f.api.get(`/api/v1/box/${tag}`, { token });
  if (existing.status === 404) {
    const a = await f.api.post("/api/v1/boxes", {
      box: { username, name, is_private: options.isPrivate ?? false },
    }, {
      token,
    });
    assertEquals(a.status, 200, a.text);
  }
  const v = await f.api.post(`/api/v1/box/${tag}/versions`, { version: { version } }, { token });
  assertEquals(v.status, 200, v.text);
  const p = await f.api.post(`/api/v1/box/${tag}/version/${version}/providers`, {
    provider: { name: options.provider ?? "virtualbox", url: "https://files.example.com/devbox.box" },
  }, { token });
  assertEquals(p.status, 200, p.text);
  const r = await f.api.put(`/api/v1/box/${tag}/version/${version}/release`, undefined, { token });
  assertEquals(r.status, 200, r.text);
}

/** User alice (password "alice-password") with box alice/devbox 1.0.0, made through the admin API; returns her token. */
export async function aliceWithDevbox(api: Client): Promise<string> {
  const admin = await api.login("admin", ADMIN_PASSWORD);
  const u = await api.post("/api/v1/admin/users", {
    user: { username: "alice", email: "alice@example.com", password: "alice-password" },
  }, { token: admin });
  assertEquals(u.status, 200, u.text);
  const alice = await api.login("alice", "alice-password");
  assertEquals((await api.post("/api/v1/boxes", { name: "devbox" }, { token: alice })).status, 200);
  const v = await api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, {
    token: alice,
  });
  assertEquals(v.status, 200, v.text);
  return alice;
}
