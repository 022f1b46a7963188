// ACL auth methods, binding rules, JWT login and OIDC login through the real Nomad Go API client
// (tests/events/nomad_go/sso/main.go) against npm oidc-provider (docs/events.md#sso-login).

import { assert } from "../helpers/assert.ts";
import { oidcUsers, startOidcProvider } from "../fixtures/oidc_provider.ts";
import { rootSecret } from "./stream_helpers.ts";
import * as nomadGo from "./nomad_go.ts";

const redirectUri = "http://localhost:4649/oidc/callback";

Deno.test({
  name: "the Nomad Go client manages auth methods and binding rules and logs in with a JWT and with OIDC",
  ignore: nomadGo.nomadGoMissing !== undefined,
  async fn() {
    const op = await startOidcProvider({ redirectUris: [redirectUri] });
    const srv = await nomadGo.startServerForGo();
    try {
      const alice = oidcUsers.alice;
      const run = await nomadGo.runNomadGoProgram("sso", [
        srv.url,
        rootSecret,
        op.issuer,
        op.clientId,
        op.clientSecret,
        redirectUri,
        alice.login,
        alice.password,
      ]);
      nomadGo.assertAllChecksPassed(run, 26);
      assert(run.checks.some((c) => c.name === "ACLAuth.CompleteAuth"));
    } finally {
      await srv.stop();
      await op.stop();
      await nomadGo.removeNomadGoBuilds();
    }
  },
});
