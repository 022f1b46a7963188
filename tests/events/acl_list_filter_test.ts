// Nomad's `filter` on the lists that take it (tokens, jobs, nodes; docs/events.md#list-filters): a bexpr
// expression over each item as listed, 400 text/plain when it does not parse or fails on an item.

import { assert, assertEquals } from "../helpers/assert.ts";
import { call, createToken, putPolicy, rootSecret, startEventsServer } from "./stream_helpers.ts";

type Item = Record<string, unknown>;

Deno.test("nomad list filters narrow tokens, jobs and nodes and refuse bad expressions", async (t) => {
  const srv = await startEventsServer();
  const get = (path: string) => call(srv.url, "GET", path, { token: rootSecret });
  const list = async (path: string, filter?: string): Promise<Item[]> => {
    const r = await get(
      filter === undefined
        ? path
        : `${path}${path.includes("?") ? "&" : "?"}filter=${encodeURIComponent(filter)}`,
    );
    assertEquals(r.status, 200, r.text);
    return r.json as Item[];
  };
  const names = (items: Item[], key = "Name") => items.map((i) => i[key]);
  const refused = async (path: string, filter: string): Promise<string> => {
    const r = await get(`${path}?filter=${encodeURIComponent(filter)}`);
    assertEquals(r.status, 400, r.text);
    assertEquals(r.headers.get("Content-Type"), "text/plain; charset=utf-8");
    return r.text;
  };
  try {
    await putPolicy(srv.url, "a", `namespace "default" { policy = "read" }`);
    await createToken(srv.url, ["a"], { Name: "ci" });
    await createToken(srv.url, [], { Name: "ops", Type: "management" });
    await createToken(srv.url, ["a"], { Name: "web", Global: true });

    await t.step("tokens: a valid filter keeps only the matching stubs", async () => {
      const all = await list("/v1/acl/tokens");
      assertEquals(all.length, 4);
      const management = await list("/v1/acl/tokens", `Type == "management"`);
      assertEquals(names(management), names(all.filter((i) => i.Type === "management")));
      assertEquals(management.length, 2);
      // A management token's Policies render as null (Go's nil slice): empty to the filter, as in go-bexpr.
      assertEquals(names(await list("/v1/acl/tokens", "Policies is empty")), names(management));
      assertEquals(names(await list("/v1/acl/tokens", `Policies contains "a" and Global == false`)), ["ci"]);
      assertEquals(names(await list("/v1/acl/tokens", `Global == true and Name matches "^w"`)), ["web"]);
      assertEquals(names(await list("/v1/acl/tokens", `Name == "nobody"`)), []);
      // An empty filter is no filter.
      assertEquals(names(await list("/v1/acl/tokens", "")), names(all));
      // `prefix` narrows by accessor ID before the filter, as Nomad's does.
      const web = all.find((i) => i.Name === "web")!;
      const accessor = String(web.AccessorID);
      assertEquals(names(await list(`/v1/acl/tokens?prefix=${accessor.slice(0, 8)}`)), ["web"]);
      assertEquals(names(await list(`/v1/acl/tokens?prefix=${accessor.slice(0, 8)}`, `Global == false`)), []);
    });

    await t.step(
      "tokens: a filter that does not parse, is too long or fails on an item is a 400",
      async () => {
        const paren = await refused("/v1/acl/tokens", "(((");
        assert(
          paren.startsWith("failed to create result paginator: failed to read filter expression: "),
          paren,
        );
        const long = await refused("/v1/acl/tokens", `Name == "${"x".repeat(2048)}"`);
        assert(long.includes("longer than 2048 characters"), long);
        const field = await refused("/v1/acl/tokens", `Nope == "x"`);
        assert(field.startsWith("failed to read result page: "), field);
        // A pattern that would compile to 308,001 instructions is refused before re2js spends seconds on it.
        const started = performance.now();
        const large = await refused("/v1/acl/tokens", `Name matches "${"[a-z]{0,1000}".repeat(154)}Z"`);
        assert(large.includes("expression too large"), large);
        assert(performance.now() - started < 250, `${performance.now() - started} ms`);
      },
    );

    await t.step("jobs: the filter applies with the prefix, over the stubs", async () => {
      for (const [id, type] of [["web", "service"], ["worker", "batch"], ["api", "batch"]]) {
        const r = await call(srv.url, "PUT", "/v1/jobs", {
          token: rootSecret,
          body: { Job: { ID: id, Type: type, TaskGroups: [{ Name: "g" }] } },
        });
        assertEquals(r.status, 200, r.text);
      }
      assertEquals(names(await list("/v1/jobs", `Type == "batch"`), "ID"), ["api", "worker"]);
      assertEquals(names(await list("/v1/jobs?prefix=w", `Type == "batch"`), "ID"), ["worker"]);
      assertEquals(names(await list("/v1/jobs?prefix=a", `Type == "service"`), "ID"), []);
      assert((await refused("/v1/jobs", "(((")).startsWith("failed to create result paginator: "));
    });

    await t.step("nodes: the filter applies over the stubs", async () => {
      for (const [id, dc] of [["n1", "eu1"], ["n2", "us1"], ["n3", "eu1"]]) {
        const r = await call(srv.url, "PUT", "/v1/node/register", {
          token: rootSecret,
          body: { Node: { ID: id, Name: id, Datacenter: dc, Status: "ready" } },
        });
        assertEquals(r.status, 200, r.text);
      }
      assertEquals(names(await list("/v1/nodes", `Datacenter == "eu1"`), "ID"), ["n1", "n3"]);
      assertEquals(names(await list("/v1/nodes?prefix=n3", `Datacenter == "eu1"`), "ID"), ["n3"]);
      assert((await refused("/v1/nodes", "(((")).startsWith("failed to create result paginator: "));
    });

    await t.step("policies and roles take no filter, as in Nomad: it is ignored", async () => {
      assertEquals(names(await list("/v1/acl/policies", "(((")), ["a"]);
      assertEquals(names(await list("/v1/acl/roles", `Name == "x"`)), []);
    });
  } finally {
    await srv.stop();
  }
});
