// GET /v1/metrics (issue #26, docs/operations.md#metrics): who may read it, the text format (promtool and our own
// reader), counters that move with requests, 404s under their status class and never under their path, and no
// hostile path, user name, token or password in any label. One server for the file, one more for the public switch.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { type MetricFamily, parsePrometheus, valueOf } from "../helpers/prometheus_text.ts";
import {
  ADMIN_PASSWORD,
  createUser,
  type Fixture,
  publishExternal,
  startRegistry,
} from "../registry/helpers.ts";
import { fastEnv, signInAdmin } from "../authmethods/helpers.ts";
import { call, createToken, putPolicy, rootSecret } from "../events/stream_helpers.ts";
import { loadConfig } from "../../lib/config.ts";
import { ConfigError } from "../../lib/errors.ts";

const metricsToken = "metrics-token-0123456789abcdef";
const promtool = await which("promtool");

async function which(name: string): Promise<string | undefined> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    const path = `${dir}/${name}`;
    if (await Deno.stat(path).then((s) => s.isFile, () => false)) return path;
  }
  return undefined;
}

async function scrape(
  url: string,
  headers: Record<string, string> = { Authorization: `Bearer ${metricsToken}` },
  query = "?format=prometheus",
): Promise<{ status: number; type: string | null; text: string }> {
  const r = await fetch(`${url}/v1/metrics${query}`, { headers });
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
}

async function metrics(url: string): Promise<Map<string, MetricFamily>> {
  const r = await scrape(url);
  assertEquals(r.status, 200, r.text);
  return parsePrometheus(r.text);
}

async function get(url: string, path: string, init: RequestInit = {}): Promise<number> {
  const r = await fetch(url + path, init);
  await r.body?.cancel();
  return r.status;
}

/** `promtool check metrics` on `text`: its complaints ("" when none). */
async function promtoolCheck(args: string[], input?: string): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(promtool!, {
    args,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  if (input !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(input));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

let fixture: Fixture | undefined;
async function server(): Promise<Fixture> {
  fixture ??= await startRegistry({
    ...fastEnv,
    WHARF_METRICS_TOKEN: metricsToken,
    WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
    // Tokens that expire within the test (the expired-token case below).
    WHARF_ACL_TOKEN_MIN_TTL: "1s",
  });
  return fixture;
}

/** A Nomad ACL request as the root token that must succeed; its JSON. */
async function asRoot(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const r = await call(url, method, path, { token: rootSecret, body });
  assertEquals(r.status, 200, `${method} ${path}: ${r.text}`);
  return r.json as Record<string, unknown>;
}

Deno.test("metrics: refused without credentials (401) and with a wrong or non-management token (403), text/plain", async () => {
  const { srv } = await server();
  const none = await scrape(srv.url, {});
  assertEquals(none.status, 401);
  assertMatch(none.type ?? "", /^text\/plain/);
  assertMatch(none.text, /Permission denied/);
  for (
    const headers of <Record<string, string>[]> [
      { Authorization: `Bearer ${metricsToken}x` },
      { Authorization: `Bearer ${metricsToken.slice(0, -1)}` },
      { "X-Nomad-Token": "5a1b2c3d-0000-4000-8000-000000000000" },
      { Authorization: "Basic " + btoa(`admin:${ADMIN_PASSWORD}`) },
    ]
  ) {
    const r = await scrape(srv.url, headers);
    assertEquals(r.status, headers.Authorization?.startsWith("Basic") ? 401 : 403, JSON.stringify(headers));
    assertMatch(r.type ?? "", /^text\/plain/);
  }
  // A client ACL token is a real token, not a management one.
  await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
  const client = (await createToken(srv.url, ["nodes"])).SecretID;
  assertEquals((await scrape(srv.url, { "X-Nomad-Token": client })).status, 403);
  // The management token (either header) and the metrics token read.
  assertEquals((await scrape(srv.url, { "X-Nomad-Token": rootSecret })).status, 200);
  assertEquals((await scrape(srv.url, { Authorization: `Bearer ${rootSecret}` })).status, 200);
  const ok = await scrape(srv.url);
  assertEquals(ok.status, 200);
  assertEquals(ok.type, "text/plain; version=0.0.4; charset=utf-8");
});

Deno.test("metrics: an ACL token is judged as at every management-only endpoint (unknown, expired, client tokens)", async () => {
  const { srv } = await server();
  /** The answer to `secret` at /v1/metrics and at another management-only endpoint (a policy delete). */
  const both = async (secret: string) => {
    const answers = [];
    for (const [method, path] of [["GET", "/v1/metrics"], ["DELETE", "/v1/acl/policy/no-such-policy"]]) {
      const r = await fetch(srv.url + path, { method, headers: { "X-Nomad-Token": secret } });
      answers.push({ status: r.status, type: r.headers.get("content-type"), text: await r.text() });
    }
    return answers;
  };
  const refusedAlike = async (secret: string, text: string) => {
    const [metricsAnswer, other] = await both(secret);
    assertEquals(metricsAnswer, other);
    assertEquals(metricsAnswer!.status, 403);
    assertEquals(metricsAnswer!.text, text);
  };
  await refusedAlike("5a1b2c3d-0000-4000-8000-000000000001", "ACL token not found");
  // A management token that expires: read while it lasts, refused once it has expired (checked last).
  const expiring = await asRoot(srv.url, "POST", "/v1/acl/token", {
    Name: "expiring",
    Type: "management",
    ExpirationTTL: "1s",
  });
  assertEquals((await both(expiring.SecretID as string)).map((a) => a.status), [200, 200]);
  // Client tokens are refused whatever their roles or policies grant (metrics need management); after their role
  // or policy is deleted the answer still matches the other management-only endpoint's.
  await putPolicy(srv.url, "metrics-readers", 'node { policy = "read" }');
  const role = (await asRoot(srv.url, "POST", "/v1/acl/role", {
    Name: "metrics-role",
    Policies: [{ Name: "metrics-readers" }],
  })).ID as string;
  const viaRole = (await createToken(srv.url, [], { Roles: [{ ID: role }] })).SecretID;
  const viaPolicy = (await createToken(srv.url, ["metrics-readers"])).SecretID;
  await asRoot(srv.url, "DELETE", `/v1/acl/role/${role}`);
  await refusedAlike(viaRole, "Permission denied");
  await asRoot(srv.url, "DELETE", "/v1/acl/policy/metrics-readers");
  await refusedAlike(viaPolicy, "Permission denied");
  const left = Date.parse(expiring.ExpirationTime as string) - Date.now();
  await new Promise((r) => setTimeout(r, Math.max(0, left) + 20));
  await refusedAlike(expiring.SecretID as string, "ACL token expired");
  // The root management token and WHARF_METRICS_TOKEN still read.
  assertEquals((await scrape(srv.url, { "X-Nomad-Token": rootSecret })).status, 200);
  assertEquals((await scrape(srv.url)).status, 200);
});

Deno.test("metrics: the text passes promtool check metrics and our own reader; the JSON has Nomad's shape", async (t) => {
  const f = await server();
  await get(f.srv.url, "/v1/agent/health");
  await get(f.srv.url, "/api/v1/box/nobody/nothing");
  const { text } = await scrape(f.srv.url);
  await t.step({
    name: promtool ? "promtool check metrics" : "promtool check metrics (SKIPPED: promtool not installed)",
    ignore: !promtool,
    fn: async () => {
      const checked = await promtoolCheck(["check", "metrics"], text);
      assertEquals(checked.out, "");
      assertEquals(checked.code, 0);
    },
  });
  const families = parsePrometheus(text);
  for (const f of families.values()) {
    assertMatch(f.name, /^(wharf_[a-z]+_[a-z0-9_]+|process_[a-z_]+)$/);
    assert(f.help.length > 10, `${f.name} has a help text`);
  }
  for (
    const name of [
      "wharf_http_requests_total",
      "wharf_http_request_duration_seconds",
      "wharf_http_in_flight_requests",
      "wharf_http_open_connections",
      "wharf_http_refused_connections_total",
      "wharf_store_commit_duration_seconds",
      "wharf_store_log_head_index",
      "wharf_store_checkpoint_lag_indexes",
      "wharf_events_subscribers",
      "wharf_events_lagging_subscribers",
      "wharf_events_delivered_batches_total",
      "wharf_auth_logins_total",
      "wharf_registry_objects",
      "wharf_registry_downloads_total",
      "wharf_registry_hosted_bytes",
      "process_resident_memory_bytes",
      "process_cpu_seconds_total",
      "wharf_runtime_heap_used_bytes",
      "wharf_runtime_event_loop_lag_seconds",
    ]
  ) assert(families.has(name), `${name} is exposed`);
  assert(valueOf(families, "process_resident_memory_bytes")! > 1e6);
  // On the cluster pass (PostgreSQL + S3) the cluster's families have their samples; on a data dir, the log's size.
  if (f.srv.server.data.backend === "postgres") {
    assertEquals(valueOf(families, "wharf_cluster_database_up"), 1);
    assert(valueOf(families, "wharf_cluster_view_lag_indexes")! >= 0);
    assertEquals(valueOf(families, "wharf_cluster_db_pool_waiting"), 0);
    assert(valueOf(families, "wharf_cluster_commit_batches_total")! >= 1);
  } else {
    assertEquals(families.get("wharf_cluster_database_up")!.samples, []);
    assert(valueOf(families, "wharf_store_log_bytes")! > 0);
  }
  assert(valueOf(families, "wharf_http_open_connections")! >= 1);
  const duration = families.get("wharf_http_request_duration_seconds")!;
  assert(duration.samples.some((s) => s.name.endsWith("_bucket") && s.labels.le === "+Inf"));
  assert(duration.samples.some((s) => s.name.endsWith("_sum")));
  assert(duration.samples.some((s) => s.name.endsWith("_count")));

  const json = await scrape(f.srv.url, { Authorization: `Bearer ${metricsToken}` }, "");
  assertEquals(json.status, 200);
  const body = JSON.parse(json.text);
  assertEquals(Object.keys(body).sort(), ["Counters", "Gauges", "Points", "Samples", "Timestamp"]);
  assert(body.Gauges.some((g: { Name: string }) => g.Name === "process_resident_memory_bytes"));
  const bad = await scrape(f.srv.url, { Authorization: `Bearer ${metricsToken}` }, "?format=%0Aevil");
  assertEquals(bad.status, 400);
  assertMatch(bad.type ?? "", /^text\/plain/);
});

Deno.test("metrics: counters move with requests; a 404 counts under its status class and the family's unmatched", async () => {
  const f = await server();
  const health = { family: "events", route: "/v1/agent/health", status_class: "2xx" };
  const unmatched = { family: "events", route: "unmatched", status_class: "4xx" };
  const before = await metrics(f.srv.url);
  for (let i = 0; i < 3; i++) assertEquals(await get(f.srv.url, "/v1/agent/health"), 200);
  assertEquals(await get(f.srv.url, "/v1/no/such/thing"), 404);
  assertEquals(await get(f.srv.url, "/v1/no/such/thing"), 404);
  const after = await metrics(f.srv.url);
  const delta = (m: string, l: Record<string, string>) =>
    (valueOf(after, m, l) ?? 0) - (valueOf(before, m, l) ?? 0);
  assertEquals(delta("wharf_http_requests_total", health), 3);
  assertEquals(delta("wharf_http_requests_total", unmatched), 2);
  // The scrape before this one counted too: 5 requests and one scrape at least.
  assert(delta("wharf_http_request_duration_seconds_count", { family: "events" }) >= 6);
  assert(delta("wharf_http_request_duration_seconds_bucket", { family: "events", le: "+Inf" }) >= 6);
});

Deno.test("metrics: logins, boxes and downloads are counted", async () => {
  const f = await server();
  const before = await metrics(f.srv.url);
  const token = await createUser(f, "metricsuser");
  const wrong = await f.api.post("/api/v1/authenticate", {
    user: { login: "metricsuser", password: "nope-nope" },
  });
  assertEquals(wrong.status, 401);
  await publishExternal(f, token, "metricsuser/devbox");
  assertEquals(
    await get(f.srv.url, "/metricsuser/boxes/devbox/versions/1.0.0/providers/virtualbox.box", {
      redirect: "manual",
    }),
    302,
  );
  // The auth methods' password login: the bootstrap admin, then a wrong password.
  const { anon, primaryMethodId } = await signInAdmin(f.srv.url);
  const refused = await anon.post(`/v1/auth-methods/${primaryMethodId}:authenticate`, {
    attributes: { login_name: "admin", password: "wrong-password" },
  });
  assertEquals(refused.status, 401);
  const after = await metrics(f.srv.url);
  const delta = (m: string, l: Record<string, string> = {}) =>
    (valueOf(after, m, l) ?? 0) - (valueOf(before, m, l) ?? 0);
  assertEquals(delta("wharf_auth_logins_total", { method: "registry", result: "success" }), 1);
  assertEquals(delta("wharf_auth_logins_total", { method: "registry", result: "failure" }), 1);
  assertEquals(delta("wharf_auth_logins_total", { method: "password", result: "success" }), 1);
  assertEquals(delta("wharf_auth_logins_total", { method: "password", result: "failure" }), 1);
  assertEquals(delta("wharf_registry_objects", { kind: "boxes" }), 1);
  assertEquals(delta("wharf_registry_objects", { kind: "versions" }), 1);
  assertEquals(delta("wharf_registry_objects", { kind: "providers" }), 1);
  assertEquals(delta("wharf_registry_objects", { kind: "hosted_files" }), 0, "an external URL hosts no file");
  assertEquals(delta("wharf_registry_downloads_total"), 1);
  assertEquals(delta("wharf_registry_download_redirects_total"), 1);
  assert(delta("wharf_store_commit_duration_seconds_count") >= 4, "user, box, version, provider committed");
  assert(delta("wharf_store_log_head_index") >= 4);
});

Deno.test("metrics: hostile paths and user names never reach a label; no token or password in the output", async () => {
  const f = await server();
  const marker = "zq9hostile";
  const hostile = [
    `${marker}%0Anewline`,
    `${marker}%22quote%5C`,
    `${marker}%00nul%1B[31m`,
    `${marker}"raw-quote`,
    `${marker}${"A".repeat(10 * 1024)}`,
  ];
  for (const h of hostile) {
    for (const prefix of ["/v1/", "/v1/auth-methods/", "/api/v1/box/", "/api/v2/", "/", "/ui/", "/health/"]) {
      const status = await get(f.srv.url, prefix + h);
      assert(status < 500, `${prefix}${h.slice(0, 40)} → ${status}`);
    }
    await get(f.srv.url, `/${h}/${h}/versions/1/providers/x.box`, { method: "DELETE" });
  }
  // Hostile user names at both password logins (the registry's, the auth methods'): within and past their limits.
  const names = [
    `${marker}\n"}`,
    `${marker}\u0000\u001b`,
    `${marker}${"B".repeat(500)}`,
    `${marker}${"C".repeat(10240)}`,
  ];
  const { anon, primaryMethodId } = await signInAdmin(f.srv.url);
  for (const name of names) {
    const registry = await f.api.post("/api/v1/authenticate", { user: { login: name, password: "x" } });
    assert(registry.status === 401 || registry.status === 422, String(registry.status));
    const auth = await anon.post(`/v1/auth-methods/${primaryMethodId}:authenticate`, {
      attributes: { login_name: name, password: "x" },
    });
    assert(auth.status === 401 || auth.status === 400, String(auth.status));
  }
  const { text } = await scrape(f.srv.url);
  const families = parsePrometheus(text);
  assert(!text.toLowerCase().includes(marker), "a hostile path or name is in the output");
  for (const secret of [metricsToken, rootSecret, f.admin, ADMIN_PASSWORD]) {
    assert(!text.includes(secret), "a secret is in the output");
  }
  const patterns = new Set(f.srv.server.routes.map((r) => r.path));
  for (const s of families.get("wharf_http_requests_total")!.samples) {
    assert(s.labels.route === "unmatched" || patterns.has(s.labels.route!), `route label ${s.labels.route}`);
  }
  // The hostile logins were counted, under fixed labels only.
  const logins = families.get("wharf_auth_logins_total")!.samples.filter((s) =>
    s.labels.method === "registry"
  );
  assert(logins.reduce((n, s) => n + s.value, 0) >= 4);
  for (const s of logins) assertMatch(s.labels.result!, /^(success|failure|throttled|invalid|error)$/);
});

Deno.test("metrics: docs/grafana/wharf.json is a dashboard whose queries name only exposed metrics", async () => {
  const f = await server();
  const families = await metrics(f.srv.url);
  const dashboard = JSON.parse(
    await Deno.readTextFile(new URL("../../docs/grafana/wharf.json", import.meta.url)),
  );
  assert(Array.isArray(dashboard.panels) && dashboard.panels.length >= 8);
  const names = new Set<string>();
  for (const p of dashboard.panels) {
    for (const t of p.targets ?? []) {
      for (const m of String(t.expr).matchAll(/\b(wharf_[a-z0-9_]+|process_[a-z_]+)/g)) {
        names.add(m[1]!);
      }
    }
  }
  for (const n of names) {
    const base = n.replace(/_(bucket|sum|count)$/, "");
    assert(families.has(n) || families.has(base), `the dashboard asks for ${n}, which is not exposed`);
  }
});

Deno.test("metrics: WHARF_METRICS_PUBLIC=1 opens /v1/metrics; without it and without a token nothing reads", async () => {
  const open = await startTestServer({ WHARF_METRICS_PUBLIC: "1" });
  try {
    const r = await scrape(open.url, {});
    assertEquals(r.status, 200);
    parsePrometheus(r.text);
  } finally {
    await open.stop();
  }
  // ACLs off: there is no management token, so only the metrics token (none here) could read.
  const closed = await startTestServer({ WHARF_ACL_ENABLED: "false" });
  try {
    assertEquals((await scrape(closed.url, {})).status, 401);
    assertEquals((await scrape(closed.url, { "X-Nomad-Token": rootSecret })).status, 403);
  } finally {
    await closed.stop();
  }
  await fixture?.stop();
  fixture = undefined;
});

Deno.test("metrics: WHARF_METRICS_TOKEN must be 16 printable characters or more", () => {
  for (const bad of ["short", "has a space in it ok", "x".repeat(15)]) {
    let err: unknown;
    try {
      loadConfig([], { WHARF_METRICS_TOKEN: bad });
    } catch (e) {
      err = e;
    }
    assert(err instanceof ConfigError, bad);
    assert(!(err as Error).message.includes(bad), "the message never repeats the token");
  }
  assertEquals(loadConfig([], { WHARF_METRICS_TOKEN: metricsToken }).metricsToken, metricsToken);
});

Deno.test({
  name: promtool
    ? "metrics: docs/prometheus/alerts.yml passes promtool check rules"
    : "metrics: docs/prometheus/alerts.yml (SKIPPED: promtool not installed)",
  ignore: !promtool,
  fn: async () => {
    const path = new URL("../../docs/prometheus/alerts.yml", import.meta.url).pathname;
    const checked = await promtoolCheck(["check", "rules", path]);
    assertEquals(checked.code, 0, checked.out);
  },
});
