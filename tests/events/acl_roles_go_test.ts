// ACL roles, one-time tokens and policy/self through the real Nomad Go API client
// (tests/events/nomad_go/roles/main.go; docs/events.md#acl-roles).

import { assert, assertEquals } from "../helpers/assert.ts";
import { rootSecret } from "./stream_helpers.ts";
import { nomadGoMissing, removeNomadGoBuilds, runNomadGoProgram, startServerForGo } from "./nomad_go.ts";

Deno.test({
  name: "the Nomad Go client manages roles, issues and exchanges one-time tokens and reads policy/self",
  ignore: nomadGoMissing !== undefined,
  async fn() {
    const srv = await startServerForGo();
    try {
      const run = await runNomadGoProgram("roles", [srv.url, rootSecret]);
      const failed = run.checks.filter((c) => !c.ok).map((c) => c.line);
      assertEquals(failed, [], run.stdout + run.stderr);
      assertEquals(run.code, 0, run.stdout + run.stderr);
      // Every check the program makes ran (a crash half-way would print fewer lines).
      assertEquals(run.checks.length, 26, run.stdout);
      assert(run.checks.some((c) => c.name === "ACLTokens.ExchangeOneTimeToken twice refused"));
    } finally {
      await srv.stop();
      await removeNomadGoBuilds();
    }
  },
});
