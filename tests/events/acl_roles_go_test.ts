// ACL roles, one-time tokens and policy/self through the real Nomad Go API client
// (tests/events/nomad_go/roles/main.go; docs/events.md#acl-roles).

import { assert } from "../helpers/assert.ts";
import { rootSecret } from "./stream_helpers.ts";
import {
  assertAllChecksPassed,
  nomadGoMissing,
  removeNomadGoBuilds,
  runNomadGoProgram,
  startServerForGo,
} from "./nomad_go.ts";

Deno.test({
  name: "the Nomad Go client manages roles, issues and exchanges one-time tokens and reads policy/self",
  ignore: nomadGoMissing !== undefined,
  async fn() {
    const srv = await startServerForGo();
    try {
      const run = await runNomadGoProgram("roles", [srv.url, rootSecret]);
      assertAllChecksPassed(run, 26);
      assert(run.checks.some((c) => c.name === "ACLTokens.ExchangeOneTimeToken twice refused"));
    } finally {
      await srv.stop();
      await removeNomadGoBuilds();
    }
  },
});
