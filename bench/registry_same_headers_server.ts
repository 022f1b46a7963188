// A reference for the registry read benchmark, beside its baseline: a plain Deno.serve answering each path with
// the bytes wharf produced AND the headers wharf sent (Content-Type, Cache-Control, a fresh X-Request-Id per
// request), so the cost of those spec-required headers can be told apart from wharf's own work. The baseline
// (registry_baseline_server.ts, Content-Type only) stays the target's reference.
// Usage: deno run -A bench/registry_same_headers_server.ts ANSWERS.json — prints "reference listening on URL".

import { cannedBody } from "./canned_body.ts";

interface Answer {
  /** Wharf's response headers, without the per-request and transport ones (X-Request-Id, Date, Content-Length). */
  headers: [string, string][];
  bodyBase64: string;
}

const file = Deno.args[0];
if (!file) throw new Error("usage: registry_same_headers_server.ts ANSWERS.json");
const answers = JSON.parse(await Deno.readTextFile(file)) as Record<string, Answer>;
const bodies = new Map<string, { headers: Record<string, string>; body: string | Uint8Array<ArrayBuffer> }>();
for (const [path, a] of Object.entries(answers)) {
  bodies.set(path, {
    headers: Object.fromEntries(a.headers),
    body: cannedBody(a.bodyBase64),
  });
}
let counter = 0;

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`reference listening on http://127.0.0.1:${port}`),
}, (request) => {
  // As the baseline does, plus the headers: one headers object per request, the request id in it.
  const url = request.url;
  const hit = bodies.get(url.slice(url.indexOf("/", url.indexOf("://") + 3)));
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.body, { headers: { ...hit.headers, "x-request-id": `ref${++counter}` } });
});
