import { assertEquals } from "./helpers/assert.ts";
import { startTestServer } from "./helpers/server.ts";

Deno.test("health endpoints answer 200 while the store is open", async () => {
  const srv = await startTestServer();
  try {
    const health = await fetch(`${srv.url}/health`);
    assertEquals(health.status, 200);
    assertEquals((await health.json()).status, "ok");
    const agent = await fetch(`${srv.url}/v1/agent/health`);
    assertEquals(agent.status, 200);
    assertEquals((await agent.json()).server.ok, true);
  } finally {
    await srv.stop();
  }
});
