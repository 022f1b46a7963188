// Which family owns a path, from what the families in routes/ declare: the same owner as the regex table the
// router used before families declared their paths; and an open route is never tried under another family's paths.

import fc from "fast-check";
import { assertEquals } from "../helpers/assert.ts";
import { type ApiFamily, Router, type RouteStep } from "../../lib/router.ts";
import { FamilyTable } from "../../lib/router/families.ts";
import { familiesOf } from "../../lib/router/legacy_families.ts";
import { createLogger } from "../../lib/log.ts";
import { json } from "../../lib/http.ts";
import { startTestServer } from "../helpers/server.ts";
import { registryFamily } from "../../routes/registry/core/family.ts";
import { authFamily } from "../../routes/authmethods/family.ts";
import { eventsFamily } from "../../routes/events/family.ts";
import { serverFamily } from "../../routes/server/family.ts";

/** The table the router had before (lib/router.ts `familyForPath`, until this change), as the reference. */
function formerOwner(path: string): string {
  if (path.startsWith("/api/v1/") || path === "/api/v1") return "registry";
  if (/^\/v1\/(auth-methods|scopes|accounts|users|auth-tokens)(\/|:|$)/.test(path)) return "auth";
  if (path.startsWith("/v1/") || path === "/v1") return "events";
  if (path === "/health" || path === "/authentication-complete" || path === "/authentication-error") {
    return "server";
  }
  return "registry";
}

const words = [
  "api",
  "v1",
  "v2",
  "auth-methods",
  "scopes",
  "accounts",
  "users",
  "auth-tokens",
  "auth-methods:authenticate",
  "v1:x",
  "health",
  "authentication-complete",
  "authentication-error",
  "alice",
  "",
];
const paths = fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 4 }).map((s) =>
  `/${s.join("/")}`
);

Deno.test("every path has the owner the former regex table gave it, from the families' own declarations", () => {
  const declared = new FamilyTable([serverFamily, eventsFamily, authFamily, registryFamily]);
  const legacy = new FamilyTable(familiesOf({
    registry: registryFamily.render,
    auth: authFamily.render,
    events: eventsFamily.render,
    server: serverFamily.render,
  }));
  fc.assert(
    fc.property(paths, (path) => {
      assertEquals(declared.ownerOf(path), formerOwner(path), path);
      assertEquals(legacy.ownerOf(path), formerOwner(path), path);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("an open route is never tried for a path its family owns nothing of; it still answers its own", async () => {
  const tried: string[] = [];
  const page = (name: string) => (ctx: { params: Record<string, string> }) => {
    tried.push(name);
    return json({ page: name, ...ctx.params });
  };
  const consoleGroup = {
    family: registryFamily,
    routes: [
      { method: "GET", path: "/:user", handler: page("user") },
      { method: "GET", path: "/:user/:box", handler: page("box") },
      { method: "GET", path: "/:user/boxes/:box", handler: page("boxes") },
    ],
  };
  const events: { family: ApiFamily; routes: [] } = { family: eventsFamily, routes: [] };
  const router = Router.forGroups([events, consoleGroup], {
    logger: createLogger("error"),
    maxBodyBytes: 64,
    trustProxy: false,
  });
  const get = async (path: string) => {
    const res = await router.handle(new Request(`http://127.0.0.1${path}`), "127.0.0.1");
    return [res.status, await res.text()];
  };
  for (const path of ["/v1", "/v1/jobs", "/v1/boxes/x", "/v1/a/b/c/d/e/f"]) {
    assertEquals(await get(path), [404, "404 page not found"], path);
  }
  assertEquals(tried, []);
  assertEquals(await get("/alice/boxes/b"), [
    200,
    JSON.stringify({ page: "boxes", user: "alice", box: "b" }),
  ]);
  assertEquals(await get("/api/v1"), [200, JSON.stringify({ page: "box", user: "api", box: "v1" })]);
  assertEquals(tried, ["boxes", "box"]);
});

Deno.test("a group's steps are composed once per route at startup and run around that group's handlers only", async () => {
  let composed = 0;
  const stamp: RouteStep = (_route, next) => {
    composed++;
    return (ctx) => {
      const answer = next(ctx) as Response;
      answer.headers.set("X-Step", "stamped");
      return answer;
    };
  };
  const router = Router.forGroups([
    { family: eventsFamily, routes: [{ method: "GET", path: "/v1/plain", handler: () => json({}) }] },
    {
      family: registryFamily,
      steps: [stamp],
      routes: [
        { method: "GET", path: "/api/v1/a/:x", handler: () => json({}) },
        { method: "GET", path: "/api/v1/b", handler: () => json({}) },
      ],
    },
  ], { logger: createLogger("error"), maxBodyBytes: 64, trustProxy: false });
  assertEquals(composed, 2);
  const step = async (path: string) => {
    const res = await router.handle(new Request(`http://127.0.0.1${path}`), "127.0.0.1");
    await res.body?.cancel();
    return res.headers.get("X-Step");
  };
  assertEquals([await step("/api/v1/a/1"), await step("/api/v1/b"), await step("/v1/plain")], [
    "stamped",
    "stamped",
    null,
  ]);
  assertEquals(composed, 2);
});

Deno.test("a real server answers a wrong method on an auth collection 405, no longer a root route's 404", async () => {
  const srv = await startTestServer();
  try {
    for (const path of ["/v1/auth-methods", "/v1/accounts"]) {
      const res = await fetch(`${srv.url}${path}`, { method: "DELETE" });
      assertEquals([res.status, res.headers.get("Allow"), await res.json()], [405, "GET, POST", {
        kind: "Unimplemented",
        message: "Method not allowed.",
      }]);
    }
    // A path of the events family no route has: its own 404, without the console's or registry's root routes.
    const res = await fetch(`${srv.url}/v1/nothing`, { method: "DELETE" });
    assertEquals([res.status, await res.text()], [404, "404 page not found"]);
  } finally {
    await srv.stop();
  }
});
