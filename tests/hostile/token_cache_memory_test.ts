// A stranger presenting huge made-up Nomad ACL secrets must not make the server hold them: the HMAC memo of
// presented secrets (routes/events/acl_state.ts) kept every one up to 1,024 entries, ~50 MB of 50,000-character
// headers from anyone who can reach the port.

import { assert } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";

/** The child's V8 heap in use, from its own metrics (WHARF_METRICS_PUBLIC=1). */
async function heapUsedBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/v1/metrics?format=prometheus`)).text();
  const m = /^wharf_runtime_heap_used_bytes (\S+)$/m.exec(text);
  assert(m, "wharf_runtime_heap_used_bytes in the metrics");
  return Number(m[1]);
}

Deno.test("made-up 50,000-character ACL secrets are refused and not kept in memory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-token-cache-" });
  const child = await spawnServer(dir, { WHARF_METRICS_PUBLIC: "1" });
  try {
    const filler = "s".repeat(50_000);
    const before = await heapUsedBytes(child.url);
    const send = async (headers: Record<string, string>, expected: number) => {
      const response = await fetch(`${child.url}/v1/acl/token/self`, { headers });
      await response.body?.cancel();
      assert(response.status === expected, `${Object.keys(headers)} → ${response.status}`);
    };
    const clients = [0, 1, 2, 3, 4, 5, 6, 7];
    // 1,000 distinct made-up secrets (the memo was emptied only at 1,024), 8 clients at once ...
    await Promise.all(clients.map(async (c) => {
      for (let i = 0; i < 125; i++) await send({ "X-Nomad-Token": `${c}-${i}-${filler}` }, 403);
    }));
    // ... then twice as many bytes in a header nothing keeps (an anonymous read of the token: 200), so that the heap is collected before it is read.
    await Promise.all(clients.map(async () => {
      for (let i = 0; i < 250; i++) await send({ "X-Filler": filler }, 200);
    }));
    const growthMib = ((await heapUsedBytes(child.url)) - before) / (1024 * 1024);
    console.log(
      `heap in use grew by ${growthMib.toFixed(1)} MiB after 1,000 made-up 50,000-character secrets`,
    );
    assert(
      growthMib < 25,
      `the server kept ${growthMib.toFixed(1)} MiB of made-up secrets (at most 25 expected)`,
    );
  } finally {
    child.kill();
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
