// Shared setup of the node endpoint tests: a server with ACLs off, register and read helpers.

import { assertEquals } from "../helpers/assert.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { call } from "./stream_helpers.ts";

export type Node = Record<string, unknown> & { Events: Array<Record<string, unknown>> };

export function withServer(name: string, fn: (ts: TestServer) => Promise<void>) {
  Deno.test(name, async () => {
    const ts = await startTestServer({ WHARF_ACL_ENABLED: "false" });
    try {
      await fn(ts);
    } finally {
      await ts.stop();
    }
  });
}

export async function register(ts: TestServer, body: unknown): Promise<number> {
  const r = await call(ts.url, "PUT", "/v1/node/register", { body });
  assertEquals(r.status, 200, r.text);
  return (r.json as { Index: number }).Index;
}

export async function getNode(ts: TestServer, id: string): Promise<Node> {
  const r = await call(ts.url, "GET", `/v1/node/${id}`);
  assertEquals(r.status, 200, r.text);
  return r.json as Node;
}
