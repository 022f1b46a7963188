// The protected floor for the registry read benchmark: the same-headers reference (registry_same_headers_server.ts:
// wharf's bytes and headers, a fresh X-Request-Id per request) served through wharf's own connection layer,
// lib/serve.ts `serve()` with app.ts's default limits (header 10 s, body 60 s, idle 75 s timeouts, the default
// connection cap), so no router, store or access log: what any server with those protections costs on Deno 2.9.6.
// Usage: deno run -A bench/registry_protected_floor_server.ts ANSWERS.json — prints "floor listening on URL".

import { createLogger } from "../lib/log.ts";
import { defaultMaxConnections, serve } from "../lib/serve.ts";
import { cannedBody } from "./canned_body.ts";

interface Answer {
  headers: [string, string][];
  bodyBase64: string;
}

const file = Deno.args[0];
if (!file) throw new Error("usage: registry_protected_floor_server.ts ANSWERS.json");
const answers = JSON.parse(await Deno.readTextFile(file)) as Record<string, Answer>;
const bodies = new Map<string, { headers: Record<string, string>; body: string | Uint8Array<ArrayBuffer> }>();
for (const [path, a] of Object.entries(answers)) {
  bodies.set(path, { headers: Object.fromEntries(a.headers), body: cannedBody(a.bodyBase64) });
}
let counter = 0;

const serving = serve({
  hostname: "127.0.0.1",
  port: 0,
  logger: createLogger("warn"),
  // app.ts's defaults (WHARF_HEADER_TIMEOUT, WHARF_BODY_TIMEOUT, WHARF_IDLE_TIMEOUT, WHARF_MAX_CONNECTIONS).
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 75_000,
  maxConnections: defaultMaxConnections(),
  onError: () => new Response("Internal error", { status: 500 }),
}, (request) => {
  const url = request.url;
  const hit = bodies.get(url.slice(url.indexOf("/", url.indexOf("://") + 3)));
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.body, { headers: { ...hit.headers, "x-request-id": `floor${++counter}` } });
});
if (serving.mode !== "connections") {
  throw new Error(`serve() fell back to ${serving.mode}: no floor to measure`);
}
console.log(`floor listening on http://127.0.0.1:${serving.addr.port}`);
