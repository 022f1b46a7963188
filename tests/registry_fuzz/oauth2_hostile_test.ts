// Property-based hostile traffic against POST /oauth2/token and the service-principal admin API: the token endpoint
// never answers 5xx or a token without the right secret, and always in the OAuth2 error JSON of
// docs/registry.md#service-principals-for-ci; malformed principal creates are refused in the registry's shape; no
// principal or token appears or disappears. WHARF_FUZZ_RUNS scales the run count (as in hostile_requests_test.ts).

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer } from "../helpers/server.ts";
import { bootstrapRegistry, clientTestEnv } from "../registry_clients/registry_api.ts";
import { anyBody, hostileSegments } from "./arbitraries.ts";
import { rawRequest, type RawResponse } from "./raw_http.ts";

const runs = Number(Deno.env.get("WHARF_FUZZ_RUNS") ?? "1000");
const encoder = new TextEncoder();
const oauthErrors = new Set([
  "invalid_request",
  "invalid_client",
  "unsupported_grant_type",
  "temporarily_unavailable",
]);

function checkOAuthAnswer(method: string, target: string, response: RawResponse): void {
  const where = `${method} ${target.slice(0, 200)} → ${response.status} ${response.text.slice(0, 300)}`;
  assert([400, 401, 405, 413, 429].includes(response.status), `unexpected status: ${where}`);
  assertEquals(response.headers.get("content-type"), "application/json", where);
  assertEquals(response.headers.get("cache-control"), "no-store", where);
  if (method === "HEAD") return;
  const body = JSON.parse(response.text);
  assertEquals(Object.keys(body).sort(), ["error", "error_description"], where);
  assert(oauthErrors.has(body.error), where);
}

function checkRegistryError(where: string, response: RawResponse): void {
  assert(response.status >= 400 && response.status < 500, `not refused: ${where} → ${response.status}`);
  assertEquals(response.headers.get("content-type"), "application/json", where);
  const body = JSON.parse(response.text);
  assertEquals(body.success, false, where);
  assert(Array.isArray(body.errors) && body.errors.length > 0, where);
}

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(...hostileSegments, "", "client_credentials", "password", "%00", "a=b&c", "é", "\u0000"),
);

Deno.test({
  name: "the token endpoint and the service-principal admin API survive hostile requests",
  async fn(t) {
    // Throttles stay out of the way of coverage: a generous login limit and a fresh client IP per request.
    const server = await startTestServer({
      ...clientTestEnv,
      WHARF_TRUST_PROXY: "1",
      WHARF_REGISTRY_LOGIN_FAILURES: "1000000",
    });
    let ip = 0;
    const nextIp = () => `10.${(++ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`;
    try {
      const { api, adminToken, aliceToken } = await bootstrapRegistry(server.url);
      const principal = await api.expectOk("POST", "/api/v1/admin/organizations/acme/service-principals", {
        token: adminToken,
        body: { service_principal: { name: "ci" } },
      });
      const clientId = String(principal.client_id);
      const listPath = "/api/v1/admin/organizations/acme/service-principals";
      const before = await api.expectOk("GET", listPath, { token: adminToken });
      const tokensBefore = server.server.data.store.count("registry/tokens");

      await t.step("any method, type, body, credentials and query on /oauth2/token", async () => {
        const formBody = fc.dictionary(
          fc.constantFrom("grant_type", "client_id", "client_secret", "scope", "x", ""),
          fc.oneof(hostileText, fc.constant(clientId)),
          { maxKeys: 5 },
        ).map((d) => encoder.encode(new URLSearchParams(d).toString()));
        const repeated = fc.constantFrom(
          `grant_type=client_credentials&grant_type=client_credentials&client_id=${clientId}&client_secret=x`,
          `grant_type=client_credentials&client_id=${clientId}&client_id=${clientId}&client_secret=x`,
          "grant_type=client_credentials&client_id=%zz&client_secret=%",
          "grant_type=client_credentials&&&=&client_id",
        ).map((s) => encoder.encode(s));
        const authorization = fc.oneof(
          fc.constant(undefined),
          fc.tuple(fc.oneof(hostileText, fc.constant(clientId)), hostileText).map(([id, secret]) =>
            `Basic ${btoa(unescape(encodeURIComponent(`${id}:${secret}`)))}`
          ),
          fc.constantFrom(
            "Basic",
            "Basic ",
            "Basic %%%",
            "Basic ====",
            `Basic ${btoa("no-colon")}`,
            "Bearer x",
          ),
          fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
        );
        const request = fc.record({
          method: fc.constantFrom("POST", "POST", "POST", "GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"),
          type: fc.constantFrom(
            "application/x-www-form-urlencoded",
            "application/x-www-form-urlencoded; charset=utf-8",
            "APPLICATION/X-WWW-FORM-URLENCODED",
            "application/json",
            "text/plain",
            "multipart/form-data; boundary=x",
            undefined,
          ),
          body: fc.oneof(formBody, repeated, anyBody),
          authorization,
          query: fc.constantFrom(
            "",
            "?client_secret=x",
            `?client_id=${clientId}`,
            "?grant_type=client_credentials",
            "?%zz",
          ),
        });
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const headers: Record<string, string> = { "X-Forwarded-For": nextIp() };
            if (r.type) headers["Content-Type"] = r.type;
            if (r.authorization !== undefined) headers.Authorization = r.authorization;
            const target = `/oauth2/token${r.query}`;
            const response = await rawRequest(server.url, r.method, target, {
              headers,
              body: r.method === "GET" || r.method === "HEAD" ? undefined : r.body,
            });
            checkOAuthAnswer(r.method, target, response);
          }),
          { numRuns: runs },
        );
      });

      await t.step(
        "an owner's malformed service-principal creates and hostile paths are refused",
        async () => {
          const body = fc.oneof(
            anyBody,
            fc.oneof(
              fc.boolean(),
              fc.integer(),
              fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
              fc.constantFrom("", "   ", "x".repeat(256)),
            ).map((name) => encoder.encode(JSON.stringify({ service_principal: { name } }))),
            fc.constant(encoder.encode(JSON.stringify({ service_principal: {} }))),
          ).filter((b) => {
            // Bodies that are a valid create (a non-blank string name ≤ 255) would rightly succeed.
            if (b === undefined) return true;
            try {
              const v = JSON.parse(new TextDecoder().decode(b));
              const inner = v && typeof v === "object" && typeof v.service_principal === "object" &&
                  v.service_principal !== null
                ? v.service_principal
                : v;
              const name = inner && typeof inner === "object" ? inner.name : undefined;
              return !(typeof name === "string" && name.trim() !== "" && name.length <= 255);
            } catch {
              return true;
            }
          });
          const request = fc.record({
            org: fc.oneof(fc.constant("acme"), fc.constantFrom(...hostileSegments)),
            client: fc.constantFrom(...hostileSegments, "sp_AAAAAAAAAAAAAAAAAAAAAAAA"),
            action: fc.constantFrom("create", "delete", "list"),
            body,
          }).filter((r) => r.action === "create" || r.org !== "acme" || r.action === "delete");
          await fc.assert(
            fc.asyncProperty(request, async (r) => {
              const base = `/api/v1/admin/organizations/${r.org}/service-principals`;
              const [method, path] = r.action === "create"
                ? ["POST", base]
                : r.action === "delete"
                ? ["DELETE", `${base}/${r.client}`]
                : ["GET", base];
              const response = await rawRequest(server.url, method, path, {
                headers: { Authorization: `Bearer ${aliceToken}`, "Content-Type": "application/json" },
                body: method === "POST" ? r.body : undefined,
              });
              checkRegistryError(`${method} ${path.slice(0, 200)}`, response);
            }),
            { numRuns: Math.max(50, Math.floor(runs / 4)) },
          );
        },
      );

      await t.step("no principal or token was made or lost, and the right secret still works", async () => {
        assertEquals(await api.expectOk("GET", listPath, { token: adminToken }), before);
        assertEquals(server.server.data.store.count("registry/tokens"), tokensBefore);
        const ok = await fetch(`${server.url}/oauth2/token`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": nextIp() },
          body: new URLSearchParams({
            grant_type: "client_credentials",
            client_id: clientId,
            client_secret: String(principal.client_secret),
          }),
        });
        assertEquals(ok.status, 200, await ok.text());
      });
    } finally {
      await server.stop();
    }
  },
});
