// The benchmark baseline: a plain Deno.serve answering every request with bytes held in memory (the exact
// body and content type wharf produced for that path), so ratios measure wharf's own overhead.
// Usage: deno run -A bench/registry_baseline_server.ts BODIES.json — prints "baseline listening on URL".

interface Canned {
  contentType: string;
  bodyBase64: string;
}

const file = Deno.args[0];
if (!file) throw new Error("usage: registry_baseline_server.ts BODIES.json");
const canned = JSON.parse(await Deno.readTextFile(file)) as Record<string, Canned>;
const bodies = new Map<string, { type: string; bytes: Uint8Array<ArrayBuffer> }>();
for (const [path, c] of Object.entries(canned)) {
  bodies.set(path, {
    type: c.contentType,
    bytes: Uint8Array.from(atob(c.bodyBase64), (ch) => ch.charCodeAt(0)),
  });
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`baseline listening on http://127.0.0.1:${port}`),
}, (request) => {
  const url = new URL(request.url);
  const hit = bodies.get(url.pathname + url.search);
  if (!hit) return new Response("not found", { status: 404 });
  return new Response(hit.bytes, { headers: { "content-type": hit.type } });
});
