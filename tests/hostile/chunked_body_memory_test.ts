// A JSON body sent as thousands of 1-byte chunks must not hold memory beyond its size: unauthenticated clients
// reach these routes, and before the fix each chunk kept a ~64 KiB read buffer alive (GiBs for a few requests).

import { assert } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";
import { memoryKib, resetPeakMemory } from "../helpers/memory.ts";

const encoder = new TextEncoder();

/** POSTs `body` with chunked transfer encoding, one byte per chunk and one write per chunk; returns the status. */
async function postInOneByteChunks(baseUrl: string, path: string, body: string): Promise<number> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  try {
    const head = `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    await conn.write(encoder.encode(head));
    for (const byte of encoder.encode(body)) {
      await conn.write(encoder.encode(`1\r\n${String.fromCharCode(byte)}\r\n`));
    }
    await conn.write(encoder.encode("0\r\n\r\n"));
    const buffer = new Uint8Array(4096);
    const n = await conn.read(buffer);
    const statusLine = new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0] ?? "";
    return Number(statusLine.split(" ")[1]);
  } finally {
    conn.close();
  }
}

Deno.test({
  name: "JSON bodies of 1-byte chunks on every family's login routes keep the server's memory bounded",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-chunks-" });
    const child = await spawnServer(dir);
    try {
      const methods = await (await fetch(`${child.url}/v1/auth-methods?scope_id=global`)).json();
      const primary = methods.items.find((m: { is_primary?: boolean }) => m.is_primary)?.id;
      assert(primary, "the global scope has a primary auth method");
      const filler = "x".repeat(6000);
      const targets: [string, string][] = [
        ["/api/v1/authenticate", JSON.stringify({ user: { login: "nobody", password: filler } })],
        [
          `/v1/auth-methods/${primary}:authenticate`,
          JSON.stringify({ attributes: { login_name: "nobody", password: filler } }),
        ],
        ["/v1/acl/bootstrap", JSON.stringify({ BootstrapSecret: filler })],
      ];
      await resetPeakMemory(child.process.pid);
      const before = await memoryKib(child.process.pid, "VmRSS");
      for (const [path, body] of targets) {
        // Two at once per route, as the outside test did.
        const statuses = await Promise.all([1, 2].map(() => postInOneByteChunks(child.url, path, body)));
        for (const status of statuses) assert(status >= 400 && status < 500, `${path} → ${status}`);
      }
      const peak = await memoryKib(child.process.pid, "VmHWM");
      const growthMib = (peak - before) / 1024;
      console.log(
        `6 bodies of ~6,000 one-byte chunks: RSS ${Math.round(before / 1024)} → peak ${
          Math.round(peak / 1024)
        } MiB`,
      );
      // Each body is ~6 KB; before the fix each one held ~300 MiB.
      assert(growthMib < 64, `peak RSS grew by ${growthMib.toFixed(1)} MiB`);
      const health = await fetch(`${child.url}/health`);
      assert(health.status === 200, `still serving: /health → ${health.status}`);
      await health.body?.cancel();
    } finally {
      child.kill();
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
