// ACL roles, one-time tokens, policy/self and list filters through the real Nomad Go API client
// (tests/events/nomad_go/roles/main.go, nomad_go/filter/main.go; docs/events.md#acl-roles, #list-filters).

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
  name:
    "the Nomad Go client manages roles, one-time tokens and policy/self, and lists with QueryOptions.Filter",
  ignore: nomadGoMissing !== undefined,
  async fn() {
    const srv = await startServerForGo();
    try {
      const run = await runNomadGoProgram("roles", [srv.url, rootSecret]);
      assertAllChecksPassed(run, 26);
      assert(run.checks.some((c) => c.name === "ACLTokens.ExchangeOneTimeToken twice refused"));
      // Same server: the filter program narrows by names of its own (a suffix), whatever the roles run left.
      assertAllChecksPassed(await runNomadGoProgram("filter", [srv.url, rootSecret]), 12);
    } finally {
      await srv.stop();
      await removeNomadGoBuilds();
    }
  },
});
