// Nomad SSO auth-url flood against a provider that never answers, on a wharf limited to 256 open files (as
// `prlimit --nofile=256`): the 180 client connections are all the flood holds, so the descriptors kept for the
// data directory, logs and uploads (docs/security.md#connections) stay free and a management write still
// commits (docs/security.md#sso-login).

import { assert, assertEquals } from "../helpers/assert.ts";
import { startStalledProvider } from "../fixtures/stalled_provider.ts";
import { call, rootSecret, spawnEventsServer } from "./stream_helpers.ts";
import { ssoRedirectUri as redirectUri } from "./sso_oidc_helpers.ts";

const fileLimit = 256;
const flood = 180;

Deno.test("Nomad SSO: 180 auth-url at once against a hanging provider hold no descriptor beyond their connections", async () => {
  const provider = startStalledProvider();
  // The connection cap a 256-file limit gives by default (256 − 64), set here as the limit is applied after start.
  const { server, stop } = await spawnEventsServer("wharf-sso-fd-", {
    WHARF_MAX_CONNECTIONS: String(fileLimit - 64),
  });
  const pid = server.process.pid;
  const limited = await new Deno.Command("prlimit", {
    args: ["--pid", String(pid), `--nofile=${fileLimit}:${fileLimit}`],
  }).output();
  assert(limited.success, new TextDecoder().decode(limited.stderr));
  const openFiles = () => [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
  try {
    const method = await call(server.url, "PUT", "/v1/acl/auth-method", {
      token: rootSecret,
      body: {
        Name: "hang",
        Type: "OIDC",
        TokenLocality: "local",
        MaxTokenTTL: "1h",
        Config: {
          OIDCDiscoveryURL: `${provider.origin}/hang`,
          OIDCClientID: "wharf",
          OIDCClientSecret: "secret",
          AllowedRedirectURIs: [redirectUri],
        },
      },
    });
    assertEquals(method.status, 200, method.text);
    const before = openFiles();

    // Concurrent HTTP/1.1 requests: each on a connection of its own, held open until answered.
    const answers = Promise.all(
      Array.from({ length: flood }, (_, i) =>
        call(server.url, "PUT", "/v1/acl/oidc/auth-url", {
          body: { AuthMethodName: "hang", RedirectURI: redirectUri, ClientNonce: `nonce-fd-${i}` },
        })),
    );
    let peak = before;
    const sampler = setInterval(() => peak = Math.max(peak, openFiles()), 50);
    // While the provider keeps the admitted logins waiting, a management write commits.
    await new Promise((r) => setTimeout(r, 3_000));
    const policy = await call(server.url, "PUT", "/v1/acl/policy/during-flood", {
      token: rootSecret,
      body: { Name: "during-flood", Rules: 'node { policy = "read" }' },
    });
    const statuses = (await answers).map((a) => a.status);
    clearInterval(sampler);
    assertEquals(policy.status, 200, policy.text);
    // The flood's descriptors: its connections, one to the provider, and the policy write's connection.
    assert(peak - before <= flood + 2, `open files went from ${before} to ${peak} (limit ${fileLimit})`);
    assertEquals(provider.connections, 1);
    // 20 admitted (the address's pending logins) share the provider's failure; the rest are refused at once.
    assertEquals([statuses.filter((s) => s === 502).length, statuses.filter((s) => s === 429).length], [
      20,
      160,
    ]);
  } finally {
    await stop();
    await provider.close();
  }
});
