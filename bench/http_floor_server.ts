// Floor for the HTTP benchmark: the least a server with a router and a per-request access line must do on
// Deno.serve. It reads the request's URL and method, finds the route by exact path, reads the clock before and
// after (the line carries a duration), and writes one JSON line per request to stderr, formatted and written
// once per 512 lines or 20 ms (as wharf does). Nothing else: no request id beyond a counter, no escaping checks, no error paths.
// Usage: deno run -A bench/http_floor_server.ts '<body>'

const body = Deno.args[0] ?? "{}";
const headers = { "Content-Type": "application/json" };
const routes = new Map<string, () => Response>([["/v1/agent/health", () => new Response(body, { headers })]]);
const encoder = new TextEncoder();
/** Per request: sequence, method, path, status, started, ended; formatted only when written. */
let pending: (string | number)[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;
let counter = 0;
let isoMs = 0;
let isoText = "";

function flush() {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  const offset = Date.now() - performance.now();
  let text = "";
  for (let i = 0; i < pending.length; i += 6) {
    const ms = Math.trunc((pending[i + 5] as number) + offset);
    if (ms !== isoMs) isoText = new Date(isoMs = ms).toISOString();
    text += `{"time":"${isoText}","level":"info","msg":"request","request_id":"${pending[i]}","method":"${
      pending[i + 1]
    }","path":"${pending[i + 2]}","status":${pending[i + 3]},"duration_ms":${
      Math.round(((pending[i + 5] as number) - (pending[i + 4] as number)) * 100) / 100
    }}\n`;
  }
  pending = [];
  const bytes = encoder.encode(text);
  let at = 0;
  while (at < bytes.length) at += Deno.stderr.writeSync(bytes.subarray(at));
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`floor listening on http://127.0.0.1:${port}`),
}, (request) => {
  const started = performance.now();
  const url = request.url;
  const method = request.method;
  const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
  const handler = routes.get(path);
  const response = handler ? handler() : new Response("not found", { status: 404 });
  if (pending.push(++counter, method, path, response.status, started, performance.now()) >= 6 * 512) flush();
  else timer ??= setTimeout(flush, 20);
  return response;
});
