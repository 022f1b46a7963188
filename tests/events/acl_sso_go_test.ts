// ACL auth methods, binding rules, JWT login and OIDC login through the real Nomad Go API client
// (tests/events/nomad_go/sso/main.go) against npm oidc-provider (docs/events.md#sso-login).

import { assert, assertEquals } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { rootSecret } from "./stream_helpers.ts";
import { nomadGoMissing, removeNomadGoBuilds, runNomadGoProgram, startServerForGo } from "./nomad_go.ts";

const redirectUri = "http://localhost:4649/oidc/callback";

Deno.test({
  name: "the Nomad Go client manages auth methods and binding rules and logs in with a JWT and with OIDC",
  ignore: nomadGoMissing !== undefined,
  async fn() {
    const op = await startOidcProvider({ redirectUris: [redirectUri] });
    const srv = await startServerForGo();
    try {
      const alice = oidcUsers.alice;
      const run = await runNomadGoProgram("sso", [
        srv.url,
        rootSecret,
        op.issuer,
        op.clientId,
        op.clientSecret,
        redirectUri,
        alice.login,
        alice.password,
      ]);
      const failed = run.checks.filter((c) => !c.ok).map((c) => c.line);
      assertEquals(failed, [], run.stdout + run.stderr);
      assertEquals(run.code, 0, run.stdout + run.stderr);
      // Every check the program makes ran (a crash half-way would print fewer lines).
      assertEquals(run.checks.length, 26, run.stdout);
      assert(run.checks.some((c) => c.name === "ACLAuth.CompleteAuth"));
    } finally {
      await srv.stop();
      await op.stop();
      await removeNomadGoBuilds();
    }
  },
});
