// The benchmark baseline: a plain Deno.serve answering every request with bytes held in memory (the exact
// body and content type wharf produced for that path), so ratios measure wharf's own overhead.
// The path is found by slicing the URL (no URL parse) and the body is a string when it is text (from session 5;
// before, a Uint8Array and a URL parse per request made the baseline slower).
// Usage: deno run -A bench/registry_baseline_server.ts BODIES.json — prints "baseline listening on URL".

import { cannedBody } from "./canned_body.ts";

interface Canned {
  contentType: string;
  bodyBase64: string;
}

const file = Deno.args[0];
if (!file) throw new Error("usage: registry_baseline_server.ts BODIES.json");
const canned = JSON.parse(await Deno.readTextFile(file)) as Record<string, Canned>;
const bodies = new Map<string, { type: string; body: string | Uint8Array<ArrayBuffer> }>();
for (const [path, c] of Object.entries(canned)) {
  bodies.set(path, {
    type: c.contentType,
    body: cannedBody(c.bodyBase64),
  });
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`baseline listening on http://127.0.0.1:${port}`),
}, (request) => {
  const url = request.url;
  const hit = bodies.get(url.slice(url.indexOf("/", url.indexOf("://") + 3)));
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.body, { headers: { "content-type": hit.type } });
});
