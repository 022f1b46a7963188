// The started server's health endpoints (/health) while its store is open and right after a write.

import { assert, assertEquals } from "./helpers/assert.ts";
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

Deno.test("health reports the new log index in the answer right after a write", async () => {
  const srv = await startTestServer();
  try {
    const before = await (await fetch(`${srv.url}/health`)).json();
    const again = await (await fetch(`${srv.url}/health`)).json();
    assertEquals(again.index, before.index);
    const boot = await fetch(`${srv.url}/v1/acl/bootstrap`, { method: "POST" });
    assertEquals(boot.status, 200);
    await boot.body?.cancel();
    const after = await (await fetch(`${srv.url}/health`)).json();
    assert(after.index > before.index, `index ${after.index} should exceed ${before.index}`);
  } finally {
    await srv.stop();
  }
});
