// deno bench: the in-process cost of the registry's hot read handlers (handler + Response), called directly with
// a prepared request context holding the anonymous caller (the registry's steps around a handler — X-Request-Id,
// caller, maintenance, rate limit: routes/registry/api/steps.ts — are not included), and of the Response shapes
// they could be built with.
// The wire cost of each shape (Deno.serve's native response path) is only visible under wrk: see
// docs/benchmarks.md ("What we learned").

import { createUser, publishExternal, startRegistry } from "../tests/registry/helpers.ts";
import type { RequestContext } from "../lib/http.ts";
import { ANONYMOUS } from "../routes/registry/core/caller.ts";

const f = await startRegistry({ WHARF_RATE_LIMIT_RPS: "0" });
const alice = await createUser(f, "alice");
await publishExternal(f, alice, "alice/bytebox");
const routes = f.srv.server.routes;
const metadataRoute = routes.find((r) => r.path === "/:username/:name")!;
const boxRoute = routes.find((r) => r.path === "/api/v1/box/:username/:name" && r.method === "GET")!;
const origin = new URL(f.srv.url);

function context(path: string, params: Record<string, string>): RequestContext {
  const request = new Request(`${f.srv.url}${path}`, { headers: { Host: origin.host } });
  void request.url;
  return {
    request,
    get url() {
      return new URL(request.url);
    },
    params,
    requestId: "abcdef123",
    clientIp: "127.0.0.1",
    maxBodyBytes: 1 << 20,
    locals: ANONYMOUS,
  };
}
const metadataCtx = context("/alice/bytebox", { username: "alice", name: "bytebox" });
const boxCtx = context("/api/v1/box/alice/bytebox", { username: "alice", name: "bytebox" });

Deno.bench("metadata: boxMetadata", { group: "handlers" }, () => {
  metadataRoute.handler(metadataCtx) as Response;
});
Deno.bench("box JSON: getBox", { group: "handlers" }, () => {
  boxRoute.handler(boxCtx) as Response;
});

const body = '{"name":"alice/bytebox","versions":[]}';
const frozen = Object.freeze({ status: 200, headers: { "Content-Type": "application/json" } });
let n = 0;
Deno.bench("Content-Type init + set Cache-Control + set X-Request-Id", { group: "response" }, () => {
  const r = new Response(body, frozen);
  r.headers.set("Cache-Control", "no-cache");
  r.headers.set("X-Request-Id", `id${++n}`);
});
Deno.bench("one init object with the three headers", { group: "response" }, () => {
  new Response(body, {
    status: 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-cache", "X-Request-Id": `id${++n}` },
  });
});
Deno.bench("Content-Type only (the baseline's shape)", { group: "response", baseline: true }, () => {
  new Response(body, { headers: { "content-type": "application/json" } });
});

globalThis.addEventListener("unload", () => void f.stop());
