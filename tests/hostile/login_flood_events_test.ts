// Strangers cannot flood the durable event log through failed logins (wharf issue #22, item 4): once an address
// is locked, thousands of concurrent logins each with a new name write a bounded number of events on every login
// path (auth methods, registry, console, /oauth2/token), and an event written before the flood stays readable;
// OIDC logins started (each one a durable write) are bounded per address.

import { assert, assertEquals } from "../helpers/assert.ts";
import type { TestServer } from "../helpers/server.ts";
import { createActiveOidcMethod, fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { type OidcProviderFixture, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { nodeEvent, publish, startEventsServer, subscribe } from "../events/stream_helpers.ts";

/** As in the report: many requests at once, every one with a login name never seen before. */
const floodRequests = 3000;
const inFlight = 200;
/** Full failure events per address and window (the default), plus the window's summary. */
const perAddress = 5;
/** Full failure events per node and window (the default), plus the window's summary. */
const perNode = 20;

interface LoginPath {
  name: string;
  /** Prepares the path (whatever a stranger's client fetches first); returns the attempt to send. */
  prepare(server: TestServer): Promise<(name: string, headers?: Record<string, string>) => Promise<Response>>;
  /** Wrong logins that lock the client address. */
  lockAfter: number;
}

const json = (body: unknown) => ({ "Content-Type": "application/json", body: JSON.stringify(body) });

function post(
  url: string,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...headers, "Content-Type": type },
    body,
    redirect: "manual",
  });
}

const authMethod: LoginPath = {
  name: "auth-method :authenticate",
  lockAfter: 3,
  async prepare(server) {
    const methods = await (await fetch(`${server.url}/v1/auth-methods?scope_id=global`)).json();
    const primary = methods.items.find((m: { is_primary?: boolean }) => m.is_primary).id as string;
    return (name, headers) => {
      const { body } = json({ attributes: { login_name: name, password: "wrong-password" } });
      return post(`${server.url}/v1/auth-methods/${primary}:authenticate`, "application/json", body, headers);
    };
  },
};

const registry: LoginPath = {
  name: "registry POST /api/v1/authenticate",
  lockAfter: 50,
  prepare(server) {
    return Promise.resolve((name, headers) => {
      const { body } = json({ user: { login: name, password: "wrong-password" } });
      return post(`${server.url}/api/v1/authenticate`, "application/json", body, headers);
    });
  },
};

const oauth2: LoginPath = {
  name: "POST /oauth2/token",
  lockAfter: 50,
  prepare(server) {
    return Promise.resolve((name, headers) => {
      const body = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: name,
        client_secret: "wrong-secret",
      });
      return post(
        `${server.url}/oauth2/token`,
        "application/x-www-form-urlencoded",
        body.toString(),
        headers,
      );
    });
  },
};

const consoleSignIn: LoginPath = {
  name: "console sign-in form",
  lockAfter: 50,
  async prepare(server) {
    const page = await fetch(`${server.url}/ui/login`);
    const html = await page.text();
    const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    assert(csrf && cookie, "the sign-in page gives a CSRF token and its cookie");
    return (name, headers) => {
      const body = new URLSearchParams({ _csrf: csrf, next: "/", login: name, password: "wrong-password" });
      return post(`${server.url}/ui/login`, "application/x-www-form-urlencoded", body.toString(), {
        ...headers,
        Cookie: cookie,
      });
    };
  },
};

/** Sends `count` attempts, `concurrency` at a time, each with the name `names(i)`; their statuses, counted. */
async function flood(
  attempt: (name: string, headers?: Record<string, string>) => Promise<Response>,
  count: number,
  names: (i: number) => string,
  headers: (i: number) => Record<string, string> = () => ({}),
  concurrency = inFlight,
): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const r = await attempt(names(i), headers(i));
      await r.body?.cancel();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return statuses;
}

/** A server with small retention, so that a flood of batches would remove the events written before it. */
function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startEventsServer({
    ...fastEnv,
    WHARF_IP_LOCKOUT_THRESHOLD: "3",
    WHARF_EVENTS_SEGMENT_INDEXES: "50",
    WHARF_EVENTS_RETAIN_INDEXES: "500",
    WHARF_CHECKPOINT_INTERVAL: "50ms",
    ...env,
  });
}

/** The event written at `index` is still the first one a stream from that index yields. */
async function assertStillReadable(server: TestServer, index: number, key: string): Promise<void> {
  // Retention runs at checkpoints (every 50 ms here): give a few the chance to remove what they would.
  await new Promise((r) => setTimeout(r, 1000));
  const stream = await subscribe(server.url, `index=${index}&topic=Node`);
  try {
    const frame = await stream.nextData();
    assertEquals(
      [frame?.Index, frame?.Events?.[0]?.Key],
      [index, key],
      "the event before the flood is retained",
    );
  } finally {
    await stream.close();
  }
}

for (const path of [authMethod, registry, oauth2, consoleSignIn]) {
  Deno.test(`${path.name}: a locked address flooding new login names writes a bounded number of events`, async () => {
    const server = await startServer();
    try {
      const attempt = await path.prepare(server);
      const lock = await flood(attempt, path.lockAfter, (i) => `locker-${i}`);
      assertEquals(lock[429] ?? 0, 0, `the first ${path.lockAfter} wrong logins are answered`);
      const locked = await attempt("locker-check");
      await locked.body?.cancel();
      assertEquals(locked.status, 429, "the address is locked");
      const before = await publish(server.url, [nodeEvent("before-flood")]);
      const started = performance.now();
      const statuses = await flood(attempt, floodRequests, (i) => `stranger-${i}-${crypto.randomUUID()}`);
      const seconds = (performance.now() - started) / 1000;
      assertEquals(statuses, { 429: floodRequests });
      const after = await publish(server.url, [nodeEvent("after-flood")]);
      const written = after - before - 1;
      console.log(
        `${path.name}: ${floodRequests} throttled logins in ${seconds.toFixed(1)} s wrote ${written} batches`,
      );
      // The flood may straddle a window's end: two windows of full events and a summary each at most.
      await assertStillReadable(server, before, "before-flood");
      assert(written <= 2 * (perAddress + 1), `the flood wrote ${written} batches`);
    } finally {
      await server.stop();
    }
  });
}

Deno.test("auth-method logins failing from many addresses write a bounded number of events node-wide", async () => {
  const server = await startServer({ WHARF_TRUST_PROXY: "1" });
  try {
    const attempt = await authMethod.prepare(server);
    const before = await publish(server.url, [nodeEvent("before-flood")]);
    const addresses = 600;
    const statuses = await flood(
      attempt,
      addresses,
      (i) => `stranger-${i}`,
      (i) => ({ "X-Forwarded-For": `10.${i >> 16 & 255}.${i >> 8 & 255}.${i & 255}` }),
      // Each of these runs argon2: as many at once as the hashing queue takes without a 503.
      8,
    );
    assertEquals(statuses, { 401: addresses });
    const after = await publish(server.url, [nodeEvent("after-flood")]);
    const written = after - before - 1;
    console.log(`${addresses} failed logins from as many addresses wrote ${written} batches`);
    await assertStillReadable(server, before, "before-flood");
    assert(written <= 2 * (perNode + 1), `the logins wrote ${written} batches`);
  } finally {
    await server.stop();
  }
});

interface AuthTokenEvent {
  Type: string;
  Payload: { AuthToken: Record<string, unknown> & { count?: number; reason?: string } };
}

/** Every AuthToken event the stream holds, from the oldest. */
async function authTokenEvents(server: TestServer): Promise<AuthTokenEvent[]> {
  const stream = await subscribe(server.url, "index=0&topic=AuthToken");
  try {
    const frames = await stream.dataUntilQuiet(500);
    return frames.flatMap((f) => f.Events ?? []) as unknown as AuthTokenEvent[];
  } finally {
    await stream.close();
  }
}

/** Failures written in full plus those the summaries counted. */
function accounted(events: AuthTokenEvent[]): { full: number; counted: number; summaries: AuthTokenEvent[] } {
  const summaries = events.filter((e) => e.Type === "AuthenticationFailuresSummarized");
  return {
    full: events.filter((e) => e.Type === "AuthenticationFailed").length,
    counted: summaries.reduce((n, e) => n + e.Payload.AuthToken.count!, 0),
    summaries,
  };
}

Deno.test("every failed or throttled login is written in full or counted in a summary when its window ends", async () => {
  const server = await startServer({ WHARF_FAILED_LOGIN_EVENTS_WINDOW: "1s" });
  try {
    const attempt = await authMethod.prepare(server);
    const statuses = await flood(attempt, 503, (i) => `stranger-${i}`);
    assertEquals(statuses[401], 3);
    assertEquals(statuses[429], 500);
    // The window ends within a second and its summary goes out within a quarter of it.
    await new Promise((r) => setTimeout(r, 1600));
    const events = await authTokenEvents(server);
    const { full, counted, summaries } = accounted(events);
    assertEquals(full + counted, 503);
    assert(full >= 5, `${full} in full`);
    const first = events.find((e) => e.Type === "AuthenticationFailed")!;
    assertEquals(first.Payload.AuthToken.client_ip, "127.0.0.1");
    assertEquals(first.Payload.AuthToken.reason, "invalid_credentials");
    const summary = summaries[0]!.Payload.AuthToken as {
      window_start: string;
      window_end: string;
      addresses: Array<
        { client_ip: string; count: number; reasons: Record<string, number>; login_names: string[] }
      >;
      other_addresses: { count: number };
    };
    assertEquals(summary.addresses[0]!.client_ip, "127.0.0.1");
    assertEquals(Object.keys(summary.addresses[0]!.reasons), ["throttled"]);
    assertEquals(summary.addresses[0]!.login_names.length, 3);
    assert(Date.parse(summary.window_end) - Date.parse(summary.window_start) <= 1000);
    assert(!JSON.stringify(events).includes("wrong-password"), "no password in any event");
  } finally {
    await server.stop();
  }
});

Deno.test("what a window counted is written at shutdown", async () => {
  let server = await startServer();
  try {
    const attempt = await authMethod.prepare(server);
    const statuses = await flood(attempt, 103, (i) => `stranger-${i}`);
    assertEquals(statuses[429], 100);
    server = await server.restart();
    const { full, counted } = accounted(await authTokenEvents(server));
    assertEquals(full + counted, 103);
  } finally {
    await server.stop();
  }
});

Deno.test("OIDC logins started by strangers write a bounded number of log batches per address", async () => {
  const server = await startServer({ WHARF_TRUST_PROXY: "1" });
  let op: OidcProviderFixture | undefined;
  try {
    const { admin } = await signInAdmin(server.url);
    op = await startOidcProvider({
      redirectUris: [`${server.url}/v1/auth-methods/oidc:authenticate:callback`],
    });
    const id = await createActiveOidcMethod(admin, op, server.url);
    const start = (address: string) =>
      post(
        `${server.url}/v1/auth-methods/${id}:authenticate`,
        "application/json",
        JSON.stringify({ command: "start" }),
        { "X-Forwarded-For": address },
      );
    const before = await publish(server.url, [nodeEvent("before-flood")]);
    const statuses: Record<number, number> = {};
    let retryAfter: string | null = null;
    for (let sent = 0; sent < 600; sent += 50) {
      await Promise.all(Array.from({ length: 50 }, async () => {
        const r = await start("203.0.113.7");
        await r.body?.cancel();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 429) retryAfter = r.headers.get("Retry-After");
      }));
    }
    const after = await publish(server.url, [nodeEvent("after-flood")]);
    // 30 a minute by default, as a burst: what one address started is what it wrote.
    assertEquals(statuses[200], 30, JSON.stringify(statuses));
    assertEquals(statuses[429], 570, JSON.stringify(statuses));
    assert(Number(retryAfter) >= 1, `Retry-After ${retryAfter}`);
    assert(after - before - 1 <= 30, `600 starts wrote ${after - before - 1} batches`);
    await assertStillReadable(server, before, "before-flood");
    // Another address is not held back by the first one's flood.
    const other = await start("198.51.100.9");
    assertEquals(other.status, 200, await other.text());
  } finally {
    await op?.stop();
    await server.stop();
  }
});
