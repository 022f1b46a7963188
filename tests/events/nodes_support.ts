// Shared setup of the node endpoint tests: a server with ACLs off, register and read helpers.

import { assertEquals } from "../helpers/assert.ts";
import { testWith } from "../helpers/fixture.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { call } from "./stream_helpers.ts";

export type Node = Record<string, unknown> & { Events: Array<Record<string, unknown>> };

/** Each test gets a fresh server with ACLs off (the node and job tests share it). */
export const withServer = testWith(() => startTestServer({ WHARF_ACL_ENABLED: "false" }));

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
