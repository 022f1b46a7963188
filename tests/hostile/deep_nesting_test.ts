// Deeply nested JSON (2,000 to 100,000 levels, all under the 1 MiB body limit) in the places each family keeps
// free-form: whatever the server decides, it must answer in its error shape and never with a 5xx (job and node
// register once answered 500 from 5,000 levels on: structuredClone overflowed the stack).

import { assert } from "../helpers/assert.ts";
import { nested } from "./arbitraries.ts";
import { send } from "./check.ts";
import { closeWorld, openWorld } from "./world.ts";

const depths = [2_000, 5_000, 20_000, 100_000];

Deno.test("auth-method writes and filters answer deeply nested input without 5xx", async () => {
  const world = await openWorld();
  const admin = { Authorization: `Bearer ${world.admin.token}` };
  const { ids } = world;
  try {
    const failures: string[] = [];
    for (const depth of depths) {
      const deep = nested(depth, "object");
      const requests: Array<[string, string, string]> = [
        ["POST", "/v1/auth-methods", `{"scope_id":"global","type":"password","attributes":{"x":${deep}}}`],
        [
          "POST",
          "/v1/auth-methods",
          `{"scope_id":"global","type":"password","name":"d${depth}","zzz":${deep}}`,
        ],
        ["PATCH", `/v1/auth-methods/${ids.oidcMethod}`, `{"version":1,"attributes":{"prompts":${deep}}}`],
        ["POST", `/v1/auth-methods/${ids.passwordMethod}:authenticate`, `{"attributes":${deep}}`],
        [
          "POST",
          "/v1/accounts",
          `{"auth_method_id":"${ids.passwordMethod}","attributes":{"login_name":${deep}}}`,
        ],
        ["POST", "/v1/scopes", `{"scope_id":"global","name":${deep}}`],
        ["PATCH", `/v1/users/${ids.aliceUser}`, `{"version":1,"admin":${deep}}`],
      ];
      for (const [method, path, body] of requests) {
        try {
          await send(world.server.url, method, path, admin, body);
        } catch (err) {
          failures.push(`depth ${depth}: ${(err as Error).message.slice(0, 300)}`);
        }
      }
      const filter = encodeURIComponent("(".repeat(Math.min(depth, 20_000)) + '"/item/name" == "x"');
      for (const list of ["/v1/auth-methods?scope_id=global&", "/v1/scopes?", "/v1/users?scope_id=global&"]) {
        try {
          await send(world.server.url, "GET", `${list}filter=${filter}`, admin);
        } catch (err) {
          failures.push(`depth ${depth}: ${(err as Error).message.slice(0, 300)}`);
        }
      }
    }
    assert(failures.length === 0, failures.join("\n"));
  } finally {
    await closeWorld(world);
  }
});

Deno.test("events writes answer deeply nested input without 5xx", async () => {
  const world = await openWorld();
  const management = { "X-Nomad-Token": world.management };
  try {
    const failures: string[] = [];
    for (const depth of depths) {
      const deepObject = nested(depth, "object");
      const deepArray = nested(depth, "array");
      const requests: Array<[string, string, string]> = [
        [
          "POST",
          "/v1/event/publish",
          `{"Events":[{"Topic":"Node","Type":"NodeEvent","Key":"k","Payload":{"Node":${deepObject}}}]}`,
        ],
        ["PUT", "/v1/acl/policy/deep", `{"Name":"deep","Rules":${JSON.stringify(deepObject)}}`],
        [
          "PUT",
          "/v1/acl/policy/deep",
          `{"Name":"deep","Rules":${JSON.stringify("node " + "{".repeat(depth))}}`,
        ],
        ["PUT", "/v1/acl/token", `{"Name":"deep","Type":"client","Policies":${deepArray}}`],
        ["PUT", "/v1/jobs", `{"Job":{"ID":"deep-a-${depth}","TaskGroups":${deepObject}}}`],
        ["PUT", "/v1/jobs", `{"Job":{"ID":"deep-b-${depth}","Zextra":${deepArray}}}`],
        ["PUT", "/v1/jobs", `{"Job":{"ID":"deep-c-${depth}","Periodic":{"x":${deepArray}}}}`],
        ["PUT", "/v1/node/register", `{"Node":{"ID":"${crypto.randomUUID()}","Zextra":${deepObject}}}`],
        [
          "PUT",
          "/v1/node/register",
          `{"Node":{"ID":"${crypto.randomUUID()}","NodeResources":{"Devices":${deepArray}}}}`,
        ],
        ["POST", `/v1/node/${world.ids.node}/drain`, `{"DrainSpec":null,"Meta":${deepObject}}`],
      ];
      for (const [method, path, body] of requests) {
        try {
          await send(world.server.url, method, path, management, body);
        } catch (err) {
          failures.push(`depth ${depth}: ${(err as Error).message.slice(0, 300)}`);
        }
      }
    }
    assert(failures.length === 0, failures.join("\n"));
  } finally {
    await closeWorld(world);
  }
});
