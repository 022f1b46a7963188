import { startTestServer } from "../tests/helpers/server.ts";
import { bootstrapRegistry, clientTestEnv } from "../tests/registry_clients/registry_api.ts";
import { seedBoxes } from "./registry_seed.ts";
const server = await startTestServer(clientTestEnv);
const { api, aliceToken } = await bootstrapRegistry(server.url);
await seedBoxes(api, aliceToken, "alice", Number(Deno.args[0] ?? 3000), 64);
for (const path of ["/api/v1/search?q=ubuntu&sort=downloads&order=desc&page=3&limit=10", "/api/v1/search?q=ubuntu&sort=created&page=3", "/api/v1/search?sort=updated", "/api/v1/box/alice/ubuntu-01500", "/alice/ubuntu-01500"]) {
  const times: number[] = [];
  for (let i = 0; i < 300; i++) { const t = performance.now(); await (await fetch(server.url + path)).arrayBuffer(); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  console.log(path, "p50", times[150]!.toFixed(2), "p90", times[270]!.toFixed(2), "p99", times[297]!.toFixed(2), "ms");
}
import { runWrk } from "./lib.ts";
for (const path of ["/api/v1/search?q=ubuntu&sort=downloads&order=desc&page=3&limit=10", "/api/v1/search?q=ubuntu&sort=created&page=3", "/api/v1/search?page=3", "/api/v1/box/alice/ubuntu-01500"]) {
  const r = await runWrk(server.url + path, { seconds: 5, connections: 50 });
  console.log("wrk", path, r.requestsPerSec.toFixed(0), "req/s p50", r.p50ms, "p99", r.p99ms);
}
await server.stop();
