// ACL token TTLs beyond Go's time.Duration (an int64 of nanoseconds) are refused as Nomad refuses them.

import { assertEquals } from "../helpers/assert.ts";
import { parseGoDuration } from "../../routes/events/duration.ts";
import { call, eventsServerTest, rootSecret } from "./stream_helpers.ts";

Deno.test("go durations past an int64 of nanoseconds are invalid, the largest ones are not", () => {
  assertEquals(parseGoDuration("2562047h"), 2562047 * 3600e9);
  assertEquals(parseGoDuration("9223372036854775807ns"), 9223372036854775807);
  assertEquals(parseGoDuration("-9223372036854775808ns"), -9223372036854775808);
  for (
    const s of [
      "2562048h",
      "9223372036854775808ns",
      "9999999999999h",
      "-9999999999999h",
      `1${"0".repeat(400)}h`,
    ]
  ) {
    assertEquals(parseGoDuration(s), undefined, s);
  }
  assertEquals(parseGoDuration(`${"0".repeat(400)}1h`), 3600e9, "leading zeros are not significant");
});

eventsServerTest("an ACL token TTL that overflows a duration is a 400 invalid duration", async (srv) => {
  const post = (body: unknown) => call(srv.url, "PUT", "/v1/acl/token", { token: rootSecret, body });
  for (const ttl of ["9999999999999h", "-9999999999999h", `1${"0".repeat(400)}h`]) {
    const r = await post({ Type: "management", ExpirationTTL: ttl });
    assertEquals([r.status, r.text], [
      400,
      `Failed to decode request body: time: invalid duration ${JSON.stringify(ttl)}`,
    ]);
  }
  const huge = await post({ Type: "management", ExpirationTTL: 1e30 });
  assertEquals([huge.status, huge.text], [
    400,
    "Failed to decode request body: json: cannot unmarshal number into Go struct field ACLToken.ExpirationTTL of type time.Duration",
  ]);
  const listed = await call(srv.url, "GET", "/v1/acl/tokens", { token: rootSecret });
  assertEquals((listed.json as unknown[]).length, 1, "only the bootstrap token exists");
});
