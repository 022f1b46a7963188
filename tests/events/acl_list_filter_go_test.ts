// Nomad's `filter` on token and job lists through the real Nomad Go API client (QueryOptions.Filter;
// tests/events/nomad_go/filter/main.go; docs/events.md#list-filters).

import { rootSecret } from "./stream_helpers.ts";
import {
  assertAllChecksPassed,
  nomadGoMissing,
  removeNomadGoBuilds,
  runNomadGoProgram,
  startServerForGo,
} from "./nomad_go.ts";

Deno.test({
  name: "the Nomad Go client lists tokens and jobs with QueryOptions.Filter and gets a 400 for a bad one",
  ignore: nomadGoMissing !== undefined,
  async fn() {
    const srv = await startServerForGo();
    try {
      const run = await runNomadGoProgram("filter", [srv.url, rootSecret]);
      assertAllChecksPassed(run, 12);
    } finally {
      await srv.stop();
      await removeNomadGoBuilds();
    }
  },
});
