// Hostile traffic against every auth-method route and the server's own routes (/health, OIDC landing pages):
// never a 5xx, errors as Boundary's `{kind, message}` JSON, no stack traces, nothing the admin can see
// changed and nothing written outside the data dir. Seeded fast-check; WHARF_HOSTILE_RUNS scales it.

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { assertWrongTypesRefused, fillPath, hostileQuery, nested } from "./arbitraries.ts";
import { runs, seed, send } from "./check.ts";
import {
  assertBadBodiesRefused,
  assertHostileIdsRefused,
  assertOddMethodsRefused,
  assertUnauthorisedRefused,
} from "./refusals.ts";
import { authBodyTargets, authEndpoints, serverEndpoints } from "./targets.ts";
import { hostileWorldTest } from "./world.ts";

const encoder = new TextEncoder();

/** Credentials that must leave the caller anonymous: a bad token makes the caller anonymous. */
const badCredentials = fc.constantFrom<Record<string, string>>(
  {},
  { Authorization: "Bearer at_AAAAAAAAAA_s1" + "1".repeat(44) },
  { Authorization: "Bearer " + "x".repeat(4000) },
  { Authorization: "Basic YWRtaW46YWRtaW4tcGFzc3dvcmQtMQ==" },
  { Authorization: "Bearer" },
  { Authorization: "bearer %00../../" },
  { Cookie: "wt-js-token-cookie=at_AAAAA; wt-http-token-cookie=AAAA_s1zzz" },
  { Cookie: "wt-js-token-cookie=" + "%".repeat(300) },
  { Authorization: "Bearer \u00e9\u2603" },
  { Cookie: "wt-js-token-cookie=\u00e9; wt-http-token-cookie=\u2603" },
);

const all = [...authEndpoints, ...serverEndpoints];
const writes = authEndpoints.filter((e) => e.method === "POST" || e.method === "PATCH");
const withPlaceholder = authEndpoints.filter((e) => e.template.includes("{"));

/** Bodies that are not a JSON object, or not JSON, or too big or too deep to be one. */
const notAnObjectBody = fc.oneof(
  fc.constantFrom("{", "[1,", '{"version":', "\u0000", "null", "[]", "42", '"s"', "true", "\ufeff{}")
    .map((s) => encoder.encode(s)),
  fc.constantFrom(1_100_000, 2_000_000).map((n) => encoder.encode(`{"name":"${"y".repeat(n)}"}`)),
  fc.constantFrom(5_000, 100_000).map((d) => encoder.encode(nested(d, "array"))),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).filter((b) => b[0] !== 0x7b && b[0] !== 0x20),
);

hostileWorldTest(
  "auth-method routes refuse hostile requests without 5xx, in Boundary's shape, changing nothing",
  "the admin",
  async (t, world) => {
    const { server, valid } = world;
    const adminHeaders = { Authorization: `Bearer ${world.admin.token}` };

    await t.step("anonymous or bad-token requests with any path, method and body", async () => {
      // Anonymous callers may only list methods, authenticate and follow callbacks
      // (docs/auth-methods.md#managing-auth-methods).
      const adminOnly = (method: string, path: string) =>
        /^\/v1\/(scopes|accounts|managed-groups|users|auth-tokens)/.test(path) && method !== "OPTIONS";
      await assertUnauthorisedRefused(
        server.url,
        all,
        valid,
        badCredentials,
        adminOnly,
        "anonymous request accepted",
      );
    });

    await t.step("the admin's requests with a hostile id in the path", async () => {
      await assertHostileIdsRefused(server.url, withPlaceholder, valid, adminHeaders);
    });

    await t.step("the admin's odd methods on real paths", async () => {
      await assertOddMethodsRefused(server.url, all, valid, adminHeaders, (s) => s === 404 || s === 405);
    });

    await t.step("the admin's writes with malformed, huge or deeply nested bodies", async () => {
      await assertBadBodiesRefused(server.url, writes, valid, adminHeaders, notAnObjectBody);
    });

    const targets = authBodyTargets(world.ids);
    await t.step("the admin's writes with a wrongly typed field (or a 100 KB value) anywhere", async () => {
      await assertWrongTypesRefused(server.url, targets, adminHeaders);
    });

    await t.step("the admin's writes with unknown keys where the API refuses them", async () => {
      for (const target of targets.filter((x) => x.strictKeys)) {
        for (const key of ["zzz_unknown", "__proto__", "Name\u0000"]) {
          const body = target.strictKeys === "top"
            ? { ...target.base, [key]: "x" }
            : { ...target.base, attributes: { ...target.base.attributes as object, [key]: "x" } };
          const text = JSON.stringify(body);
          const r = await send(server.url, target.method, target.path, adminHeaders, text);
          assertEquals(
            r.status,
            400,
            `unknown ${key} accepted: ${target.method} ${target.path} → ${r.text}`,
          );
        }
      }
    });

    await t.step("bad query parameters on lists and callbacks, as admin and anonymous", async () => {
      const lists: Array<[string, string[]]> = [
        ["/v1/auth-methods", ["scope_id", "recursive", "filter", "list_token", "page_size"]],
        ["/v1/scopes", ["scope_id", "recursive", "filter", "list_token", "page_size"]],
        ["/v1/accounts", ["auth_method_id", "filter", "list_token", "page_size"]],
        ["/v1/users", ["scope_id", "recursive", "filter", "list_token", "page_size"]],
        ["/v1/managed-groups", ["auth_method_id", "filter", "list_token", "page_size"]],
        ["/v1/auth-tokens", ["scope_id", "recursive", "filter", "list_token", "page_size"]],
        ["/v1/auth-methods/oidc:authenticate:callback", ["code", "state", "error", "error_description"]],
        [`/v1/auth-methods/${valid.oidc}:authenticate:callback`, ["code", "state", "error", "error_uri"]],
        ["/authentication-error", ["error", "error_description"]],
        ["/authentication-complete", ["x"]],
        ["/health", ["index"]],
      ];
      const base: Record<string, string> = {
        "/v1/auth-methods": "scope_id=global&",
        "/v1/accounts": `auth_method_id=${valid.method}&`,
        "/v1/users": "scope_id=global&",
        "/v1/managed-groups": `auth_method_id=${world.ids.ldapMethod}&`,
        "/v1/auth-tokens": "scope_id=global&",
      };
      const request = fc.record({
        list: fc.constantFrom(...lists),
        admin: fc.boolean(),
        keepBase: fc.boolean(),
      }).chain((r) => hostileQuery(r.list[1]).map((query) => ({ ...r, query })));
      await fc.assert(
        fc.asyncProperty(request, async ({ list, admin, keepBase, query }) => {
          const prefix = keepBase ? base[list[0]] ?? "" : "";
          const r = await send(
            server.url,
            "GET",
            `${list[0]}?${prefix}${query}`,
            admin ? adminHeaders : {},
          );
          // The OIDC landing pages echo `error` into HTML: it must come back escaped.
          assert(
            !/<(script|img)/i.test(r.text),
            `unescaped markup: ${list[0]}?${query} → ${r.text.slice(0, 300)}`,
          );
        }),
        { numRuns: runs * 3, seed },
      );
    });

    await t.step(
      "bad update_mask values on every PATCH (with a stale version, so nothing can apply)",
      async () => {
        const patches = authEndpoints.filter((e) => e.method === "PATCH");
        const request = fc.record({
          endpoint: fc.constantFrom(...patches),
          query: hostileQuery(["update_mask"]),
        });
        await fc.assert(
          fc.asyncProperty(request, async ({ endpoint, query }) => {
            const path = `${fillPath(endpoint.template, valid)}?${query}`;
            const r = await send(
              server.url,
              "PATCH",
              path,
              adminHeaders,
              '{"version":999,"description":"x"}',
            );
            assert(r.status === 400 || r.status === 409, `PATCH ${path.slice(0, 200)} → ${r.status}`);
          }),
          { numRuns: runs, seed },
        );
      },
    );
  },
);
