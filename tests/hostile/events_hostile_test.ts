// Hostile traffic against every route of the Nomad-shaped family (ACL, one-time tokens, stream, publish, nodes,
// jobs, metrics): never a 5xx, errors as bare text/plain, no stack traces, no secret echoed, nothing a
// management token can see changed, nothing written outside the data dir. Seeded fast-check;
// WHARF_HOSTILE_RUNS scales it.

import { refusedHeaderValue } from "../../lib/header_values.ts";
import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { assertWrongTypesRefused, hostileQuery, nested } from "./arbitraries.ts";
import { checkAnswer, describe, runs, seed, send } from "./check.ts";
import { rawRequest } from "../registry_fuzz/raw_http.ts";
import { probe } from "./head_probe.ts";
import {
  assertBadBodiesRefused,
  assertHostileIdsRefused,
  assertOddMethodsRefused,
  assertUnauthorisedRefused,
} from "./refusals.ts";
import { hostileString } from "./stored_strings.ts";
import { type Endpoint, eventsEndpoints } from "./targets.ts";
import { eventsBodyTargets } from "./targets_events.ts";
import { hostileWorldTest } from "./world.ts";

const encoder = new TextEncoder();
const plain = eventsEndpoints.filter((e) => !e.streaming);
const withPlaceholder = plain.filter((e) => e.template.includes("{"));
/** A one-time token's issue: any ACL token may ask one for itself (docs/events.md#one-time-tokens), no body. */
const isOneTimeIssue = (method: string, path: string) =>
  (method === "POST" || method === "PUT") && path === "/v1/acl/token/onetime";
/** Writes whose body matters (purge, one-time issue and DELETE ignore bodies: a "bad" body would not stop them). */
const bodyWrites = plain.filter((e) =>
  (e.method === "POST" || e.method === "PUT") && !e.template.endsWith("/purge") &&
  !isOneTimeIssue(e.method, e.template)
);

/** Bodies no write may accept: malformed, non-objects (not `null`, which Go decodes as "nothing given"), huge, deep. */
const notAnObjectBody = fc.oneof(
  fc.constantFrom("{", "[1,", '{"Name":', "\u0000", "[]", "42", '"s"', "true")
    .map((s) => encoder.encode(s)),
  fc.constantFrom(1_100_000, 2_000_000).map((n) => encoder.encode(`{"Zzz":"${"y".repeat(n)}"}`)),
  fc.constantFrom(5_000, 100_000).map((d) => encoder.encode(nested(d, "array"))),
);

hostileWorldTest(
  "events routes refuse hostile requests without 5xx, as text/plain, changing nothing",
  "a management token",
  async (t, world) => {
    const { server, valid } = world;
    const management = { "X-Nomad-Token": world.management };

    await t.step(
      "anonymous, bad-token or client-token requests with any path, method and body",
      async () => {
        const credentials = fc.constantFrom<Record<string, string>>(
          {},
          { "X-Nomad-Token": crypto.randomUUID() },
          { "X-Nomad-Token": "   " },
          { "X-Nomad-Token": "\u00e9\u00ff" },
          { "X-Nomad-Token": "%00../../" + "x".repeat(3000) },
          { Authorization: `Bearer ${crypto.randomUUID()}` },
          { Authorization: `Basic ${world.management}` },
          { "X-Nomad-Token": world.clientSecret },
          { Authorization: `bearer ${world.clientSecret}` },
          { "X-Nomad-Token": world.clientSecret, Authorization: `Bearer ${world.management}` },
        );
        const isWrite = (method: string, path: string) =>
          method !== "GET" && method !== "HEAD" && !isOneTimeIssue(method, path);
        await assertUnauthorisedRefused(
          server.url,
          plain,
          valid,
          credentials,
          isWrite,
          "write without management",
        );
      },
    );

    await t.step("management requests with a hostile id in the path", async () => {
      // Deleting an absent policy is a 200 no-op, as in Nomad.
      const noop = (endpoint: Endpoint, status: number) =>
        endpoint.method === "DELETE" && endpoint.template.startsWith("/v1/acl/policy/") && status === 200;
      await assertHostileIdsRefused(server.url, withPlaceholder, valid, management, noop);
    });

    await t.step("management odd methods on real paths", async () => {
      // 404/405 in the main; some paths answer 400 for a body a method cannot carry.
      await assertOddMethodsRefused(server.url, eventsEndpoints, valid, management, (s) => s >= 400);
    });

    await t.step("management writes with malformed, huge or deeply nested bodies", async () => {
      await assertBadBodiesRefused(server.url, bodyWrites, valid, management, notAnObjectBody);
    });

    await t.step("management writes with a wrongly typed field (or a 100 KB value) anywhere", async () => {
      const targets = eventsBodyTargets(world.ids, crypto.randomUUID());
      await assertWrongTypesRefused(server.url, targets, management);
    });

    await t.step("bad query parameters on the stream and the lists", async () => {
      const tokens = [world.management, world.clientSecret, ""];
      const request = fc.record({
        path: fc.constantFrom(
          "/v1/event/stream",
          "/v1/event/stream",
          "/v1/nodes",
          "/v1/jobs",
          `/v1/job/${valid.job}`,
          `/v1/node/${valid.node}`,
          "/v1/acl/policies",
          "/v1/acl/tokens",
          "/v1/acl/policy/self",
          "/v1/metrics",
        ),
        token: fc.constantFrom(...tokens),
        query: hostileQuery(["index", "topic", "namespace", "prefix", "wait", "stale", "region", "format"]),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ path, token, query }) => {
          const target = `${path}?${query}`;
          const r = await probe(server.url, target, token ? { "X-Nomad-Token": token } : {});
          checkAnswer("GET", target, r);
          // Only the first `index` counts; anything but an optionally signed integer is a 400.
          const index = new URLSearchParams(query).get("index");
          if (path === "/v1/event/stream" && index && !/^[+-]?[0-9]+$/.test(index)) {
            assertEquals(r.status, 400, `bad index accepted: ${target.slice(0, 200)}`);
          }
        }),
        { numRuns: runs * 3, seed },
      );
    });

    await t.step("one-time, policy-self and metrics: hostile secrets refused and never echoed", async () => {
      // A secret's recognisable part, then control characters, surrogates, injections or 1 MB of text.
      const secret = fc.tuple(
        fc.uuid(),
        fc.oneof(hostileString, fc.constantFrom("y".repeat(1_100_000), "\u0000", "\r\nX-Injected: 1")),
      ).map(([id, tail]) => ({ id: `ott-${id}`, value: `ott-${id}${tail}` }));
      const notEchoed = (id: string, r: { text: string; head: Uint8Array }) =>
        assert(
          !r.text.includes(id) && !new TextDecoder().decode(r.head).includes(id),
          `secret echoed: ${r.text}`,
        );
      await fc.assert(
        fc.asyncProperty(secret, fc.constantFrom("PUT", "POST"), async ({ id, value }, method) => {
          const body = JSON.stringify({ OneTimeSecretID: value });
          const exchanged = await send(server.url, method, "/v1/acl/token/onetime/exchange", {}, body);
          assert(
            [400, 403, 413].includes(exchanged.status),
            `exchange → ${exchanged.status} ${exchanged.text}`,
          );
          notEchoed(id, exchanged);
        }),
        { numRuns: runs, seed },
      );
      // In a header: only what a header line can carry (no CR/LF, which would end the line).
      const headerSecret = secret.map(({ id, value }) => ({
        id,
        value: value.replace(/[\r\n]/g, "").slice(0, 16_000),
      }));
      const targets = fc.constantFrom(
        ["PUT", "/v1/acl/token/onetime"],
        ["POST", "/v1/acl/token/onetime"],
        ["GET", "/v1/acl/policy/self"],
        ["GET", "/v1/metrics"],
        ["GET", "/v1/metrics?format=prometheus"],
      );
      await fc.assert(
        fc.asyncProperty(
          headerSecret,
          targets,
          fc.boolean(),
          async ({ id, value }, [method, path], bearer) => {
            const headers: Record<string, string> = bearer
              ? { Authorization: `Bearer ${value}` }
              : { "X-Nomad-Token": value };
            // Deno's HTTP layer refuses a head with a control byte itself (a bare 400, before any route runs).
            const refusedByHttpLayer = refusedHeaderValue(value);
            const r = refusedByHttpLayer
              ? await rawRequest(server.url, method!, path!, { headers })
              : await send(server.url, method!, path!, headers);
            if (refusedByHttpLayer) {
              assertEquals([r.status, r.body.length], [400, 0], describe(method!, path!, r));
            }
            assert(r.status >= 400, `${method} ${path} with a hostile token → ${r.status}`);
            notEchoed(id, r);
          },
        ),
        { numRuns: runs, seed },
      );
    });

    await t.step("publish refuses a body over its 8 MiB limit with 413", async () => {
      const body = `{"Events":[{"Topic":"Node","Type":"NodeEvent","Key":"${"k".repeat(9 * 1024 * 1024)}"}]}`;
      const r = await send(server.url, "POST", "/v1/event/publish", management, body);
      assertEquals(r.status, 413, `9 MiB publish → ${r.status} ${r.text.slice(0, 200)}`);
    });
  },
);
