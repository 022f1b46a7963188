// Baseline server for HTTP benchmarks: Deno.serve answering every request with fixed bytes from memory.
// Usage: deno run -A bench/plain_server.ts '<body>' [content-type] [--read-url]
// --read-url makes it read request.url and request.method first, as any router must (Deno builds them lazily).

const args = Deno.args.filter((a) => a !== "--read-url");
const readUrl = Deno.args.includes("--read-url");
const body = new TextEncoder().encode(args[0] ?? "{}");
const headers = { "Content-Type": args[1] ?? "application/json" };
let sink = 0;
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`plain listening on http://127.0.0.1:${port}`),
}, (request) => {
  if (readUrl) sink += request.url.length + request.method.length;
  return new Response(body, { headers });
});
globalThis.addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});
