// A reference for the registry read benchmark, beside its baseline: a server answering each path with the bytes
// wharf produced AND the headers wharf sent (Content-Type, Cache-Control, a fresh X-Request-Id per request), so
// the cost of those headers can be told apart from wharf's own work. The baseline (registry_baseline_server.ts,
// Content-Type only) stays the target's reference. With --protected it is the protected floor: the same answers
// served through wharf's own connection layer, lib/serve.ts `serve()` with app.ts's default limits (header 10 s,
// body 60 s, idle 75 s timeouts, the default connection cap) and no router, store or access log. With --promised
// it is the promised-work floor: the protected floor plus, by hand and nothing else, what the registry API
// promises on every anonymous read (docs/registry.md, docs/operations.md#metrics, docs/security.md).
// Usage: deno run -A bench/registry_same_headers_server.ts [--protected | --promised] ANSWERS.json — prints
// "reference listening on URL" ("floor listening on URL" with --protected, "promised listening on URL" with
// --promised).

import { createLogger } from "../lib/log.ts";
import { refusedResponseHeader } from "../lib/header_values.ts";
import { HttpMetrics, MetricsRegistry } from "../lib/metrics/mod.ts";
import { defaultMaxConnections, serve } from "../lib/serve.ts";
import { cannedBody } from "./canned_body.ts";

interface Answer {
  /** Wharf's response headers, without the per-request and transport ones (X-Request-Id, Date, Content-Length). */
  headers: [string, string][];
  bodyBase64: string;
}

const mode = Deno.args[0] === "--protected"
  ? "floor"
  : Deno.args[0] === "--promised"
  ? "promised"
  : "reference";
const file = Deno.args[mode === "reference" ? 0 : 1];
if (!file) throw new Error("usage: registry_same_headers_server.ts [--protected | --promised] ANSWERS.json");
const answers = JSON.parse(await Deno.readTextFile(file)) as Record<string, Answer>;
interface Canned {
  headers: Record<string, string>;
  /** The headers besides Content-Type, which --promised sets after building the Response (as wharf does). */
  extra: [string, string][];
  contentType: ResponseInit;
  body: string | Uint8Array<ArrayBuffer>;
}
const bodies = new Map<string, Canned>();
for (const [path, a] of Object.entries(answers)) {
  const contentType = a.headers.find(([name]) => name === "content-type")?.[1] ?? "application/json";
  bodies.set(path, {
    headers: Object.fromEntries(a.headers),
    extra: a.headers.filter(([name]) => name !== "content-type"),
    contentType: Object.freeze({ status: 200, headers: { "content-type": contentType } }),
    body: cannedBody(a.bodyBase64),
  });
}
const label = mode;
let counter = 0;

/** As the baseline does, plus the headers: one headers object per request, the request id in it. */
function answer(request: Request): Response {
  const url = request.url;
  const hit = bodies.get(url.slice(url.indexOf("/", url.indexOf("://") + 3)));
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.body, { headers: { ...hit.headers, "x-request-id": `${label}${++counter}` } });
}

const metrics = new HttpMetrics(new MetricsRegistry());
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The promised work of an anonymous read, written out once with nothing between its steps (wharf spreads the same
 * over its router, route steps and handlers): the answer found by path (a Map lookup stands for the route table),
 * request metrics (two clock reads, a counter, a histogram bucket), the token sources looked at (Authorization,
 * ?access_token, X-Service-Token, X-Atlas-Token: none, so anonymous), the Host header read for the absolute URLs
 * of a box, the client's X-Request-Id echoed when sane, for metadata the Accept header (a browser is sent to the
 * console) and the console's session cookie (pages' downloads carry it instead of a token) with `Vary: Accept`, and
 * the response-header check before the answer leaves.
 */
function promised(request: Request): Response {
  const started = performance.now();
  const method = request.method;
  const url = request.url;
  const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
  const hit = method === "GET" ? bodies.get(path) : undefined;
  if (!hit) return new Response("not found", { status: 404 });
  const headers = request.headers;
  const given = headers.has("x-request-id") ? headers.get("x-request-id") : null;
  const requestId = given !== null && saneRequestId.test(given) ? given : `${label}${++counter}`;
  const token = headers.get("authorization") ??
    (path.includes("?") ? new URL(url).searchParams.get("access_token") : null) ??
    headers.get("x-service-token") ?? headers.get("x-atlas-token");
  if (token !== null) return new Response("a token: not what this floor measures", { status: 400 });
  if (headers.get("host") === null) return new Response("no Host", { status: 400 });
  const metadata = !path.startsWith("/api/");
  if (metadata) {
    const accept = headers.get("accept") ?? "";
    if (accept.includes("text/html") && !accept.includes("application/json")) {
      return new Response(null, { status: 302, headers: { Location: `${path}/page`, Vary: "Accept" } });
    }
    if (headers.get("cookie") !== null) return new Response("a cookie: not measured", { status: 400 });
  }
  // Built as wharf builds it (lib/http.ts jsonText, then headers.set): cheaper on Deno 2.9.6 than one init object.
  const response = new Response(hit.body, hit.contentType);
  for (const [name, value] of hit.extra) response.headers.set(name, value);
  response.headers.set("x-request-id", requestId);
  if (metadata) response.headers.set("vary", "Accept");
  if (refusedResponseHeader(response) !== undefined) return new Response("refused", { status: 500 });
  routeMetrics.record(response.status, performance.now() - started);
  return response;
}
const routeMetrics = metrics.forRoute("registry", "/:username/:name");

if (mode === "reference") {
  Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`reference listening on http://127.0.0.1:${port}`),
  }, answer);
} else {
  const serving = serve({
    hostname: "127.0.0.1",
    port: 0,
    logger: createLogger("warn"),
    headerTimeoutMs: 10_000,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: 75_000,
    maxConnections: defaultMaxConnections(),
    onError: () => new Response("Internal error", { status: 500 }),
  }, mode === "promised" ? promised : answer);
  if (serving.mode !== "connections") {
    throw new Error(`serve() fell back to ${serving.mode}: no floor to measure`);
  }
  console.log(`${label} listening on http://127.0.0.1:${serving.addr.port}`);
}
