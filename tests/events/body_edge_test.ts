// Edge cases found by the hostile-input suite (/tests/hostile): deep nesting, a non-object Node, writes to token/self.

import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { call, eventsServerTest, rootSecret } from "./stream_helpers.ts";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

eventsServerTest(
  "job and node writes nested beyond the depth limit get a 400, never a 500, and change nothing",
  async (srv) => {
    const job = `{"Job":{"ID":"deep","Meta":{"x":${nested(5000)}}}}`;
    const res = await call(srv.url, "PUT", "/v1/jobs", { token: rootSecret, body: job });
    assertEquals(res.status, 400);
    assertMatch(res.text, /^Failed to decode request body: .*exceeded max depth/);
    const node = `{"Node":{"ID":"deep-node","NodeResources":{"Devices":${nested(5000)}}}}`;
    const nodeRes = await call(srv.url, "PUT", "/v1/node/register", { token: rootSecret, body: node });
    assertEquals(nodeRes.status, 400);
    assertEquals((await call(srv.url, "GET", "/v1/jobs", { token: rootSecret })).json, []);
    assertEquals((await call(srv.url, "GET", "/v1/nodes", { token: rootSecret })).json, []);
    const fine = await call(srv.url, "PUT", "/v1/jobs", {
      token: rootSecret,
      body: `{"Job":{"ID":"ok","Meta":{"x":"${"y".repeat(10)}"}}}`,
    });
    assertEquals(fine.status, 200);
  },
);

eventsServerTest(
  "node register with a Node member that is not an object is a 400, not a defaulted node",
  async (srv) => {
    for (const body of ['{"Node":"x"}', '{"Node":7}', '{"Node":["x"]}']) {
      const res = await call(srv.url, "PUT", "/v1/node/register", { token: rootSecret, body });
      assertEquals(res.status, 400, body);
      assertMatch(res.text, /cannot unmarshal .* into Go struct field NodeRegisterRequest\.Node/);
    }
    assertEquals((await call(srv.url, "GET", "/v1/nodes", { token: rootSecret })).json, []);
  },
);

eventsServerTest(
  "writes to /v1/acl/token/self are a wrong method (405), not an accessor named self",
  async (srv) => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await call(srv.url, method, "/v1/acl/token/self", { token: rootSecret, body: "{}" });
      assertEquals([res.status, res.text, res.headers.get("Allow")], [405, "Invalid method", "GET"], method);
    }
    assertEquals((await call(srv.url, "GET", "/v1/acl/token/self", { token: rootSecret })).status, 200);
  },
);
