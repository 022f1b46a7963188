// Property tests: node and job request bodies either decode or fail with a client error, never a crash.

import fc from "fast-check";
import { assert } from "../helpers/assert.ts";
import { ApiError } from "../../lib/errors.ts";
import { decodeJob } from "../../routes/events/jobs_model.ts";
import { decodeDrainRequest, decodeRegistration } from "../../routes/events/nodes_ops.ts";

function onlyClientErrors(fn: () => unknown): void {
  try {
    const out = fn();
    JSON.stringify(out);
  } catch (err) {
    assert(
      err instanceof ApiError && err.status === 400,
      `unexpected ${err instanceof Error ? err.stack : err}`,
    );
  }
}

const nodeKeys = fc.constantFrom(
  "ID",
  "Name",
  "Status",
  "SchedulingEligibility",
  "NodePool",
  "Attributes",
  "Meta",
  "NodeResources",
  "Drivers",
  "HostVolumes",
  "DrainStrategy",
  "Events",
  "__proto__",
  "node",
);
const jobKeys = fc.constantFrom(
  "ID",
  "Name",
  "Namespace",
  "Type",
  "Priority",
  "Datacenters",
  "Meta",
  "Periodic",
  "ParameterizedJob",
  "VaultToken",
  "__proto__",
  "job",
);
const values = fc.jsonValue({ maxDepth: 3 });

Deno.test("decodeRegistration and decodeDrainRequest throw only 400s for random bodies", () => {
  fc.assert(
    fc.property(fc.dictionary(nodeKeys, values), (body) => {
      onlyClientErrors(() => decodeRegistration(body, Date.now()));
      onlyClientErrors(() => decodeRegistration({ Node: body }, Date.now()));
      onlyClientErrors(() => decodeDrainRequest(body));
    }),
    { numRuns: 1000 },
  );
});

Deno.test("decodeJob throws only 400s for random bodies", () => {
  fc.assert(
    fc.property(fc.dictionary(jobKeys, values), fc.option(fc.string()), (job, ns) => {
      onlyClientErrors(() => decodeJob({ Job: job }, ns));
    }),
    { numRuns: 1000 },
  );
  fc.assert(fc.property(values, (v) => onlyClientErrors(() => decodeJob({ Job: v }, null))), {
    numRuns: 300,
  });
});
