// Baseline server for HTTP benchmarks: Deno.serve answering every request with fixed bytes from memory.
// Usage: deno run -A bench/plain_server.ts '<body>' [content-type]

const body = new TextEncoder().encode(Deno.args[0] ?? "{}");
const type = Deno.args[1] ?? "application/json";
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`plain listening on http://127.0.0.1:${port}`),
}, () => new Response(body, { headers: { "Content-Type": type } }));
