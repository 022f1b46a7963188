// The router (lib/router.ts), called with Requests and in a started server: custom verbs, 404/405/400/413/500 in
// each family's shape, the access log's redaction, repeated slashes and HEAD.

import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { Router } from "../../lib/router.ts";
import { createLogger } from "../../lib/log.ts";
import { json, readJson } from "../../lib/http.ts";
import { withServerFamilies } from "../helpers/families.ts";
import { startTestServer } from "../helpers/server.ts";

function makeRouter(logLines: string[] = []) {
  return Router.forGroups(
    withServerFamilies([
      {
        method: "POST",
        path: "/v1/auth-methods/:id([^/:]+)\\:authenticate",
        handler: (ctx) => json({ authenticated: ctx.params.id }),
      },
      {
        method: "GET",
        path: "/v1/auth-methods/:id([^/:]+)",
        handler: (ctx) => json({ read: ctx.params.id }),
      },
      { method: "POST", path: "/api/v1/echo", handler: async (ctx) => json({ echo: await readJson(ctx) }) },
      { method: "POST", path: "/v1/echo", handler: async (ctx) => json({ echo: await readJson(ctx) }) },
      { method: "GET", path: "/api/v1/boom", handler: () => Promise.reject(new Error("secret internals")) },
      {
        method: "PUT",
        path: "/api/v1/uploads/:id",
        handler: () => json({}),
        secretParams: ["id"],
      },
    ]),
    {
      logger: createLogger("info", (l) => logLines.push(l)),
      maxBodyBytes: 64,
      trustProxy: false,
    },
  );
}

const call = (router: Router, method: string, path: string, body?: string) =>
  router.handle(new Request(`http://127.0.0.1${path}`, { method, body }), "127.0.0.1");

Deno.test("router routes a custom-verb path apart from the plain resource path", async () => {
  const router = makeRouter();
  assertEquals(await (await call(router, "POST", "/v1/auth-methods/ampw_1234567890:authenticate")).json(), {
    authenticated: "ampw_1234567890",
  });
  assertEquals(await (await call(router, "GET", "/v1/auth-methods/ampw_1234567890")).json(), {
    read: "ampw_1234567890",
  });
});

Deno.test("router renders 404 and 405 in the shape of the family that owns the path", async () => {
  const router = makeRouter();
  const reg404 = await call(router, "GET", "/api/v1/nothing");
  assertEquals([reg404.status, await reg404.json()], [404, {
    errors: ["Resource not found!"],
    success: false,
  }]);
  const auth405 = await call(router, "DELETE", "/v1/auth-methods/ampw_1:authenticate");
  assertEquals(auth405.status, 405);
  assertEquals(auth405.headers.get("Allow"), "POST");
  assertEquals(typeof (await auth405.json()).kind, "string");
  const ev404 = await call(router, "GET", "/v1/nothing");
  assertEquals([ev404.status, await ev404.text()], [404, "404 page not found"]);
  const ev405 = await call(router, "GET", "/v1/echo");
  assertEquals([ev405.status, await ev405.text()], [405, "Invalid method"]);
});

Deno.test("router answers malformed JSON with 400 and oversize bodies with 413, per family", async () => {
  const router = makeRouter();
  const bad = await call(router, "POST", "/api/v1/echo", "{not json");
  assertEquals(bad.status, 400);
  const badBody = await bad.json();
  assertEquals(badBody.success, false);
  assertMatch(badBody.errors[0], /not valid JSON/);
  const big = await call(router, "POST", "/api/v1/echo", JSON.stringify({ pad: "x".repeat(200) }));
  assertEquals(big.status, 413);
  assertEquals((await big.json()).success, false);
  const evBad = await call(router, "POST", "/v1/echo", "[1,");
  assertEquals(evBad.status, 400);
  assertMatch(await evBad.text(), /^Failed to decode request body: /);
  const evBig = await call(router, "POST", "/v1/echo", "x".repeat(100));
  assertEquals([evBig.status, await evBig.text()], [413, "Request body too large"]);
  // A chunked body without Content-Length is cut off at the limit too.
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('"xxxxxxxxxxxxxxxxxxxxxxx"'));
      c.close();
    },
  });
  const chunked = await makeRouter().handle(
    new Request("http://127.0.0.1/api/v1/echo", { method: "POST", body: stream }),
    "127.0.0.1",
  );
  assertEquals(chunked.status, 413);
});

Deno.test("router turns an unexpected exception into a 500 with a request id and no internals", async () => {
  const lines: string[] = [];
  const res = await call(makeRouter(lines), "GET", "/api/v1/boom");
  assertEquals(res.status, 500);
  const body = await res.json();
  assertMatch(body.errors[0], /^Internal (server )?error \(request [A-Za-z0-9]+\)$/);
  assertEquals(JSON.stringify(body).includes("secret internals"), false);
  // The id the client sees is the one in the error record and the access line, and the next request's differs.
  const id = /request ([A-Za-z0-9]+)\)/.exec(body.errors[0])![1];
  const records = lines.map((l) => JSON.parse(l));
  assertEquals(records.map((r) => [r.msg, r.request_id]), [["unhandled error", id], ["request", id]]);
  await (await call(makeRouter(lines), "GET", "/api/v1/boom")).arrayBuffer();
  assertEquals(JSON.parse(lines.at(-1)!).request_id === id, false);
});

Deno.test("router writes one JSON access-log line per request without query strings or secret params", async () => {
  const lines: string[] = [];
  const router = makeRouter(lines);
  await call(router, "GET", "/v1/auth-methods/ampw_1?access_token=SECRET");
  await call(router, "PUT", "/api/v1/uploads/upload-secret-123", "{}");
  const records = lines.map((l) => JSON.parse(l)).filter((r) => r.msg === "request");
  assertEquals(records.length, 2);
  assertEquals(records[0].path, "/v1/auth-methods/ampw_1");
  assertEquals(records[0].status, 200);
  assertEquals(typeof records[0].request_id, "string");
  assertEquals(typeof records[0].duration_ms, "number");
  assertEquals(records[1].path, "/api/v1/uploads/***");
  assertEquals(lines.join("\n").includes("SECRET") || lines.join("\n").includes("upload-secret-123"), false);
});

Deno.test("router collapses repeated slashes and answers HEAD from the GET route without a body", async () => {
  const router = makeRouter();
  const res = await call(router, "HEAD", "//v1//auth-methods/ampw_1");
  assertEquals(res.status, 200);
  assertEquals(res.body, null);
});

Deno.test("a real server renders 404s per family over HTTP", async () => {
  const srv = await startTestServer();
  try {
    const res = await fetch(`${srv.url}/v1/definitely-not-here`);
    assertEquals([res.status, await res.text()], [404, "404 page not found"]);
    const reg = await fetch(`${srv.url}/api/v1/definitely-not-here`);
    assertEquals((await reg.json()).success, false);
  } finally {
    await srv.stop();
  }
});

Deno.test("router keeps table order between root-parameter routes and routes under a literal segment", async () => {
  const router = Router.forGroups(
    withServerFamilies([
      { method: "GET", path: "/v1/jobs/:id", handler: (ctx) => json({ route: "job", id: ctx.params.id }) },
      { method: "GET", path: "/:user/:box", handler: (ctx) => json({ route: "box", user: ctx.params.user }) },
      { method: "GET", path: "/api/v1/box/:u/:b", handler: () => json({ route: "api-box" }) },
      { method: "POST", path: "/:user/:box", handler: () => json({ route: "post-box" }) },
    ]),
    { logger: createLogger("error"), maxBodyBytes: 64, trustProxy: false },
  );
  const route = async (method: string, path: string) => {
    const r = await call(router, method, path);
    return r.status === 200 ? (await r.json()).route : r.status;
  };
  // A literal route listed before the root pattern wins; one listed after it is shadowed, as in URLPattern order.
  assertEquals(await route("GET", "/v1/jobs/web"), "job");
  assertEquals(await route("GET", "/api/v1"), "box");
  assertEquals(await route("GET", "/hashicorp/precise64"), "box");
  assertEquals(await route("GET", "/v1/web"), "box");
  assertEquals(await route("POST", "/v1/jobs"), "post-box");
  assertEquals(await route("DELETE", "/v1/jobs/web"), 405);
  assertEquals(await route("GET", "/a/b/c"), 404);
});

Deno.test("router answers every GET path with its own parameters, past the matches it remembers", async () => {
  const router = makeRouter();
  const read = async (id: string) =>
    (await (await call(router, "GET", `/v1/auth-methods/${id}`)).json()).read;
  // More paths than the table remembers (4,096), then the first ones again: each still gets its own id.
  for (let i = 0; i < 5_000; i++) assertEquals(await read(`ampw_${i}`), `ampw_${i}`);
  for (let i = 0; i < 10; i++) assertEquals(await read(`ampw_${i}`), `ampw_${i}`);
  // Longer than the paths it remembers, and percent-encoded: read the same twice.
  const long = "x".repeat(400);
  for (let i = 0; i < 2; i++) {
    assertEquals(await read(long), long);
    assertEquals(await read("a%62c"), "abc");
  }
  // A path no route matches stays a 404 however often it is asked, and a 405 stays a 405.
  for (let i = 0; i < 2; i++) {
    assertEquals((await call(router, "GET", "/v1/auth-methods/a/b")).status, 404);
    assertEquals((await call(router, "GET", "/v1/echo")).status, 405);
  }
});
