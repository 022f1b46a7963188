// Shared setup of the node endpoint tests: a server with ACLs off, register and read helpers.

import { assertEquals, assertMatch } from "../helpers/assert.ts";
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

/**
 * PUTs each body of `cases` to `path`: each is a text/plain 400 whose text equals (a string) or matches (a
 * RegExp) the expected one; an empty body is Go's EOF error; and `listPath` still lists nothing afterwards.
 */
export async function assertBodiesRefused(
  ts: TestServer,
  path: string,
  listPath: string,
  cases: Array<[unknown, string | RegExp]>,
): Promise<void> {
  for (const [body, expected] of cases) {
    const r = await call(ts.url, "PUT", path, { body });
    assertEquals(r.status, 400, JSON.stringify(body));
    if (typeof expected === "string") assertEquals(r.text, expected);
    else assertMatch(r.text, expected);
    assertEquals(r.headers.get("Content-Type"), "text/plain; charset=utf-8");
  }
  const empty = await call(ts.url, "PUT", path);
  assertEquals([empty.status, empty.text], [400, "Failed to decode request body: EOF"]);
  assertEquals((await call(ts.url, "GET", listPath)).json, []);
}
