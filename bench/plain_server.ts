// Baseline server for HTTP benchmarks: Deno.serve answering every request with fixed bytes from memory.
// Usage: deno run -A bench/plain_server.ts '<body>' [content-type] [--read-url] [--bytes]
// The body is a string by default: Deno 2.9.6 serves a string body faster than the same bytes as a Uint8Array
// (which it copies per response), so this is the stronger baseline; --bytes answers with a Uint8Array (the
// baseline of sessions 1–4). --read-url makes it read request.url and request.method first, as any router must
// (Deno builds them lazily).

const flags = ["--read-url", "--bytes"];
const args = Deno.args.filter((a) => !flags.includes(a));
const readUrl = Deno.args.includes("--read-url");
const text = args[0] ?? "{}";
const body: string | Uint8Array<ArrayBuffer> = Deno.args.includes("--bytes")
  ? new TextEncoder().encode(text)
  : text;
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
