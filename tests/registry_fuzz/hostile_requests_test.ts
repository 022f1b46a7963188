// Property-based hostile traffic against every registry endpoint (docs/security.md): never a 5xx,
// failures always in the `{"errors":[…],"success":false}` shape, nothing stored changed, nothing written
// outside the data directory. WHARF_FUZZ_RUNS scales the run count (default keeps the file under a minute).

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bootstrapRegistry, clientTestEnv } from "../registry_clients/registry_api.ts";
import {
  anyBody,
  badCredentials,
  type Endpoint,
  endpoints,
  hostilePath,
  invalidBody,
  validPath,
} from "./arbitraries.ts";
import { listTree } from "../helpers/files.ts";
import { seedBoxes, type SeededRegistry, snapshotRegistry } from "./fixture.ts";
import { rawRequest, type RawResponse } from "./raw_http.ts";

const runs = Number(Deno.env.get("WHARF_FUZZ_RUNS") ?? "1000");

/** Paths other families own: their errors have other shapes (ARCHITECTURE "Who owns a path"). */
function ownedByRegistry(target: string): boolean {
  const path = new URL(target, "http://x").pathname.replace(/\/{2,}/g, "/");
  return !/^\/(v1(\/|$)|health$|authentication-(complete|error)$)/.test(path);
}

function checkAnswer(method: string, target: string, response: RawResponse): void {
  const where = `${method} ${target.slice(0, 200)} → ${response.status} ${response.text.slice(0, 300)}`;
  assert(response.status >= 100 && response.status < 500, `server error or no status: ${where}`);
  if (response.status < 400 || !ownedByRegistry(target)) return;
  assertEquals(response.headers.get("content-type"), "application/json", `error content type: ${where}`);
  if (method === "HEAD") return;
  let body: { errors?: unknown; success?: unknown };
  try {
    body = JSON.parse(response.text);
  } catch {
    throw new Error(`error body is not JSON: ${where}`);
  }
  assert(
    Array.isArray(body.errors) && body.errors.length > 0 && body.errors.every((e) => typeof e === "string"),
    `errors must be a non-empty string array: ${where}`,
  );
  assertEquals(body.success, false, `success must be false: ${where}`);
  assertEquals(Object.keys(body).filter((k) => k !== "two_factor").sort(), ["errors", "success"], where);
}

function withQuery(path: string, query: string): string {
  return query ? `${path}${path.includes("?") ? "&" : "?"}${query}` : path;
}

interface World {
  server: TestServer;
  seeded: SeededRegistry;
  parent: string;
  victim: string;
}

async function openWorld(): Promise<World> {
  const parent = await Deno.makeTempDir({ prefix: "wharf-fuzz-" });
  const victim = `${parent}/victim.txt`;
  await Deno.writeTextFile(victim, "outside the data dir\n");
  // The data dir sits four levels down so that `../` escapes of up to four levels still land where we look.
  await Deno.mkdir(`${parent}/l1/l2/l3`, { recursive: true });
  const server = await startTestServer(clientTestEnv, `${parent}/l1/l2/l3/data`);
  const seeded = await seedBoxes(await bootstrapRegistry(server.url));
  return { server, seeded, parent, victim };
}

async function closeWorld(world: World): Promise<void> {
  await world.server.stop();
  await Deno.remove(world.parent, { recursive: true }).catch(() => {});
}

const byTemplate = (pred: (e: Endpoint) => boolean) => endpoints.filter(pred);

Deno.test({
  name: "registry survives hostile requests without 5xx, in its error shape, changing nothing",
  async fn(t) {
    const world = await openWorld();
    const { server, seeded } = world;
    try {
      const before = await snapshotRegistry(seeded);

      await t.step("anonymous or bad-token requests with any path and body", async () => {
        const request = fc.record({
          endpoint: fc.constantFrom(...endpoints),
          hostile: fc.boolean(),
          credentials: badCredentials,
          body: anyBody,
          odd: fc.constantFrom(undefined, "PATCH", "OPTIONS", "TRACE", "PROPFIND"),
        }).chain((r) =>
          (r.hostile ? hostilePath(r.endpoint.template, true) : validPath(r.endpoint.template)).map((
            path,
          ) => ({
            ...r,
            path,
          }))
        );
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const method = r.odd ?? r.endpoint.method;
            const target = withQuery(r.path, r.credentials.query);
            const response = await rawRequest(server.url, method, target, {
              headers: { ...r.credentials.headers, "Content-Type": "application/json" },
              body: method === "GET" || method === "HEAD" ? undefined : r.body,
            });
            checkAnswer(method, target, response);
          }),
          { numRuns: runs * 2 },
        );
      });

      await t.step("a box owner's requests with a hostile segment in the path", async () => {
        const withPlaceholders = endpoints.filter((e) => e.template.includes("{"));
        const request = fc.constantFrom(...withPlaceholders).chain((endpoint) =>
          fc.record({
            endpoint: fc.constant(endpoint),
            path: hostilePath(endpoint.template, false),
            body: anyBody,
          })
        );
        await fc.assert(
          fc.asyncProperty(request, async ({ endpoint, path, body }) => {
            const response = await rawRequest(server.url, endpoint.method, path, {
              headers: { Authorization: `Bearer ${seeded.aliceToken}`, "Content-Type": "application/json" },
              body: endpoint.method === "GET" || endpoint.method === "HEAD" ? undefined : body,
            });
            checkAnswer(endpoint.method, path, response);
            assert(
              response.status >= 400,
              `hostile path accepted: ${endpoint.method} ${path} → ${response.status}`,
            );
          }),
          { numRuns: runs },
        );
      });

      await t.step("a box owner's creates and updates with invalid bodies", async () => {
        const writes: Array<{ endpoint: Endpoint; resource: "box" | "version" | "provider" | "provider2" }> =
          [
            ...byTemplate((e) => e.method === "POST" && /^api\/v[12]\/boxes$/.test(e.template)).map((
              endpoint,
            ) => ({
              endpoint,
              resource: "box" as const,
            })),
            ...byTemplate((e) =>
              e.method === "PUT" && /^api\/v[12]\/box\/\{user\}\/\{box\}$/.test(e.template)
            ).map((
              endpoint,
            ) => ({
              endpoint,
              resource: "box" as const,
            })),
            ...byTemplate((e) =>
              e.template.endsWith("/versions") || (e.method === "PUT" && /\{version\}$/.test(e.template))
            )
              .map((endpoint) => ({ endpoint, resource: "version" as const })),
            ...byTemplate((e) =>
              e.template.endsWith("/providers") || (e.method === "PUT" && /\{provider\}$/.test(e.template))
            )
              .map((endpoint) => ({
                endpoint,
                resource: endpoint.template.startsWith("api/v2/")
                  ? "provider2" as const
                  : "provider" as const,
              })),
            ...byTemplate((e) => e.method === "PUT" && /\{arch\}$/.test(e.template))
              .map((endpoint) => ({ endpoint, resource: "provider2" as const })),
          ];
        const request = fc.constantFrom(...writes).chain(({ endpoint, resource }) =>
          fc.record({
            endpoint: fc.constant(endpoint),
            path: validPath(endpoint.template),
            body: invalidBody(resource),
          })
        );
        await fc.assert(
          fc.asyncProperty(request, async ({ endpoint, path, body }) => {
            const response = await rawRequest(server.url, endpoint.method, path, {
              headers: { Authorization: `Bearer ${seeded.aliceToken}`, "Content-Type": "application/json" },
              body,
            });
            checkAnswer(endpoint.method, path, response);
            assert(
              response.status >= 400,
              `invalid body accepted: ${endpoint.method} ${path} ${
                new TextDecoder().decode(body.slice(0, 300))
              }`,
            );
          }),
          { numRuns: runs },
        );
      });

      await t.step("nothing the API shows changed", async () => {
        assertEquals(await snapshotRegistry(seeded), before);
      });

      await t.step("nothing outside the data directory was touched", async () => {
        assertEquals(await listTree(world.parent, "l1/l2/l3/data"), [
          "l1",
          "l1/l2",
          "l1/l2/l3",
          "victim.txt",
        ]);
        assertEquals(await Deno.readTextFile(world.victim), "outside the data dir\n");
      });
    } finally {
      await closeWorld(world);
    }
  },
});
