// Generated bad input against every writing endpoint: answers are 4xx in Boundary's shape, never 5xx.

import fc from "fast-check";
import { assert } from "../helpers/assert.ts";
import { startAuthServer } from "./helpers.ts";

const keys = fc.constantFrom(
  "scope_id",
  "type",
  "name",
  "description",
  "version",
  "attributes",
  "command",
  "token_type",
  "id",
  "__proto__",
  "constructor",
  "dry_run",
);
const attrKeys = fc.constantFrom(
  "min_password_length",
  "issuer",
  "client_id",
  "client_secret",
  "max_age",
  "signing_algorithms",
  "api_url_prefix",
  "prompts",
  "account_claim_maps",
  "urls",
  "state",
  "certificates",
  "client_certificate",
  "client_certificate_key",
  "dereference_aliases",
  "login_name",
  "password",
  "token_id",
  "code",
  "roundtrip_payload",
  "__proto__",
);
const leaf = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("global", "password", "oidc", "ldap", "ldap://x", "https://x.example", "RS256", "none"),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
);
const attrs = fc.dictionary(attrKeys, leaf, { maxKeys: 5 });
const body = fc.oneof(
  fc.dictionary(keys, fc.oneof(leaf, attrs), { maxKeys: 6 }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ maxLength: 30 }),
);

Deno.test("generated bodies never make the auth endpoints answer 5xx", async () => {
  const f = await startAuthServer();
  try {
    const oidc = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { client_id: "c", client_secret: "s", api_url_prefix: "https://x.example" },
    });
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "ldap",
      attributes: { urls: ["ldap://127.0.0.1:1"] },
    });
    const targets: Array<[string, string]> = [
      ["POST", "/v1/auth-methods"],
      ["PATCH", `/v1/auth-methods/${f.primaryMethodId}`],
      ["PATCH", `/v1/auth-methods/${oidc.body.id}`],
      ["PATCH", `/v1/auth-methods/${ldap.body.id}`],
      ["POST", `/v1/auth-methods/${oidc.body.id}:change-state`],
      ["POST", `/v1/auth-methods/${oidc.body.id}:authenticate`],
      ["POST", `/v1/auth-methods/${ldap.body.id}:authenticate`],
      ["POST", "/v1/scopes"],
      ["POST", "/v1/accounts"],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), body, async ([method, path], b) => {
        const r = await f.admin.call(method, path, typeof b === "string" ? b : JSON.stringify(b));
        assert(
          r.status < 500,
          `${method} ${path} ${JSON.stringify(b)} → ${r.status} ${JSON.stringify(r.body)}`,
        );
        if (r.status >= 400) assert(typeof r.body.kind === "string" && typeof r.body.message === "string");
      }),
      { numRuns: 300 },
    );
    const q = fc.string({ maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(q, q, q, async (filter, token, size) => {
        const params = new URLSearchParams({
          scope_id: "global",
          filter,
          list_token: token,
          page_size: size,
        });
        const r = await f.anon.get(`/v1/auth-methods?${params}`);
        assert(r.status < 500, `${params} → ${r.status}`);
      }),
      { numRuns: 200 },
    );
  } finally {
    await f.stop();
  }
});
