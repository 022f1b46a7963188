// A reference for the registry read benchmark, beside its baseline: a server answering each path with the bytes
// wharf produced AND the headers wharf sent (Content-Type, Cache-Control, a fresh X-Request-Id per request), so
// the cost of those headers can be told apart from wharf's own work. The baseline (registry_baseline_server.ts,
// Content-Type only) stays the target's reference. With --protected it is the protected floor: the same answers
// served through wharf's own connection layer, lib/serve.ts `serve()` with app.ts's default limits (header 10 s,
// body 60 s, idle 75 s timeouts, the default connection cap) and no router, store or access log.
// Usage: deno run -A bench/registry_same_headers_server.ts [--protected] ANSWERS.json — prints
// "reference listening on URL" ("floor listening on URL" with --protected).

import { createLogger } from "../lib/log.ts";
import { defaultMaxConnections, serve } from "../lib/serve.ts";
import { cannedBody } from "./canned_body.ts";

interface Answer {
  /** Wharf's response headers, without the per-request and transport ones (X-Request-Id, Date, Content-Length). */
  headers: [string, string][];
  bodyBase64: string;
}

const isProtected = Deno.args[0] === "--protected";
const file = Deno.args[isProtected ? 1 : 0];
if (!file) throw new Error("usage: registry_same_headers_server.ts [--protected] ANSWERS.json");
const answers = JSON.parse(await Deno.readTextFile(file)) as Record<string, Answer>;
const bodies = new Map<string, { headers: Record<string, string>; body: string | Uint8Array<ArrayBuffer> }>();
for (const [path, a] of Object.entries(answers)) {
  bodies.set(path, { headers: Object.fromEntries(a.headers), body: cannedBody(a.bodyBase64) });
}
const label = isProtected ? "floor" : "reference";
let counter = 0;

/** As the baseline does, plus the headers: one headers object per request, the request id in it. */
function answer(request: Request): Response {
  const url = request.url;
  const hit = bodies.get(url.slice(url.indexOf("/", url.indexOf("://") + 3)));
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.body, { headers: { ...hit.headers, "x-request-id": `${label}${++counter}` } });
}

if (isProtected) {
  const serving = serve({
    hostname: "127.0.0.1",
    port: 0,
    logger: createLogger("warn"),
    headerTimeoutMs: 10_000,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: 75_000,
    maxConnections: defaultMaxConnections(),
    onError: () => new Response("Internal error", { status: 500 }),
  }, answer);
  if (serving.mode !== "connections") {
    throw new Error(`serve() fell back to ${serving.mode}: no floor to measure`);
  }
  console.log(`floor listening on http://127.0.0.1:${serving.addr.port}`);
} else {
  Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`reference listening on http://127.0.0.1:${port}`),
  }, answer);
}
