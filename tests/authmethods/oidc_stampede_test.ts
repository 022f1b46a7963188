// OIDC auth-method starts flooding a provider that accepts connections and never answers: 200 unauthenticated
// `:authenticate` starts at once from 200 addresses and 200 more from one address ask the provider once (one
// discovery shared by every start under way); the one address is refused past its 30 starts before the provider
// is asked (docs/security.md#openid-providers).

import { assert, assertEquals } from "../helpers/assert.ts";
import { startStalledProvider } from "../fixtures/stalled_provider.ts";
import { startAuthServer } from "../fixtures/wharf_auth.ts";
import { tally } from "../helpers/statuses.ts";

const burst = 200;

Deno.test("OIDC auth method: 400 starts at once against a hanging provider make one discovery fetch", async () => {
  const provider = startStalledProvider();
  // The provider timeout shortened to 3 s so the test waits less; X-Forwarded-For names the client address.
  const api = await startAuthServer({ WHARF_TRUST_PROXY: "1", WHARF_OIDC_HTTP_TIMEOUT: "3s" });
  try {
    const created = await api.call("POST", "/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      name: "hanging",
      attributes: {
        issuer: `${provider.origin}/hang`,
        client_id: "wharf",
        client_secret: "secret",
        signing_algorithms: ["RS256"],
        api_url_prefix: api.url,
      },
    });
    assertEquals(created.status, 200, JSON.stringify(created.body));
    const id = String(created.body.id);
    // Activated without asking the provider (it never answers).
    const activated = await api.call("POST", `/v1/auth-methods/${id}:change-state`, {
      version: created.body.version,
      attributes: { state: "active-public", disable_discovered_config_validation: true },
    });
    assertEquals(activated.status, 200, JSON.stringify(activated.body));
    assertEquals(provider.paths, []);

    const start = async (address: string) => {
      const res = await fetch(`${api.url}/v1/auth-methods/${id}:authenticate`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Forwarded-For": address },
        body: JSON.stringify({ command: "start" }),
      });
      return { status: res.status, body: await res.json() as Record<string, unknown> };
    };
    const [spread, oneAddress] = await Promise.all([
      Promise.all(Array.from({ length: burst }, (_, i) => start(`10.5.${i >> 8}.${i & 255}`))),
      Promise.all(Array.from({ length: burst }, () => start("10.6.0.1"))),
    ]);
    // Every admitted start gets the provider's failure in the family's shape; the one address past its 30.
    assertEquals(tally(spread), { 500: burst });
    assertEquals(tally(oneAddress), { 429: burst - 30, 500: 30 });
    for (const r of [...spread, ...oneAddress].filter((a) => a.status === 500)) {
      assert(String(r.body.message).startsWith("Error generating parameters for starting the OIDC flow"));
    }
    // One discovery for all 230 admitted starts: one connection, one request.
    assertEquals(provider.paths, ["/hang/.well-known/openid-configuration"]);
    assertEquals(provider.connections, 1);
  } finally {
    await api.stop();
    await provider.close();
  }
});
