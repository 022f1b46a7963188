// Two bare Deno.serve ways to send a file, for the download benchmark: GET /stream reads it through a JS byte
// stream in 1 MiB steps (lib/store/blob_stream.ts fileStream, what wharf's file blob store used before), GET
// /readable hands Deno the file's own `readable` (a resource-backed stream Deno's HTTP server reads in Rust,
// no JS per chunk). Each opens the file per request, with Content-Length, like a blob answer.
// Usage: deno run -A bench/download_floor_server.ts FILE — prints "downloads listening on URL".

import { fileStream } from "../lib/store/blob_stream.ts";

const path = Deno.args[0];
if (!path) throw new Error("usage: download_floor_server.ts FILE");

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`downloads listening on http://127.0.0.1:${port}`),
}, async (request) => {
  const route = new URL(request.url).pathname;
  if (route !== "/stream" && route !== "/readable") return new Response("not found", { status: 404 });
  const file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const headers = { "content-type": "application/octet-stream", "content-length": String(size) };
  return new Response(route === "/readable" ? file.readable : fileStream(file, size), { headers });
});
