// Unit tests of the registry's field rules: RubyGems version syntax and ordering, names.

import { assert, assertEquals } from "../helpers/assert.ts";
import {
  compareVersions,
  isValidBoxName,
  isValidVersion,
  namespacePattern,
} from "../../routes/registry/core/rules.ts";
import { RateLimiter } from "../../lib/rate_limiter.ts";

Deno.test("version syntax accepts RubyGems versions and refuses others", () => {
  for (const v of ["1", "1.0.0", "1.0.0-rc.1", "2026.03.04", "1.0.a", "0.1.0-beta-2"]) {
    assert(isValidVersion(v), v);
  }
  for (const v of ["v1.0", "", "1..0", "1.0-", ".1", "1.0.0+build", "1".repeat(65)]) {
    assert(!isValidVersion(v), v);
  }
});

Deno.test("version ordering follows Gem::Version: prereleases first, missing segments are zero", () => {
  assertEquals(compareVersions("1.0", "1.0.0"), 0);
  assertEquals(compareVersions("1.0.0-rc1", "1.0.0"), -1);
  assertEquals(compareVersions("1.0.0-rc.2", "1.0.0-rc.10"), -1);
  assertEquals(compareVersions("1.10.0", "1.9.0"), 1);
  assertEquals(compareVersions("1.0.a", "1.0.b"), -1);
  assertEquals(compareVersions("2026.03.04", "2026.3.4"), 0);
  const sorted = ["1.0.0", "1.0.0-rc.1", "0.9", "1.0.1", "1.0.0-beta"].sort(compareVersions);
  assertEquals(sorted, ["0.9", "1.0.0-beta", "1.0.0-rc.1", "1.0.0", "1.0.1"]);
});

Deno.test("names follow the namespace and box patterns", () => {
  for (const n of ["alice", "a", "acme-corp", "A_1"]) assert(namespacePattern.test(n), n);
  for (const n of ["-a", "a-", "a".repeat(41), "a.b", ""]) assert(!namespacePattern.test(n), n);
  for (const n of ["ubuntu-22.04", "a", "x_y"]) assert(isValidBoxName(n), n);
  for (const n of [".", "..", ".x", "a/b", "a b", "x".repeat(101)]) assert(!isValidBoxName(n), n);
});

Deno.test("the rate limiter refills at the configured rate and reports the wait", () => {
  const limiter = new RateLimiter(1, 2);
  assertEquals([limiter.take("k", 0), limiter.take("k", 0), limiter.take("k", 0)], [0, 0, 1]);
  assertEquals(limiter.take("other", 0), 0);
  assertEquals(limiter.take("k", 1000), 0);
  assertEquals(new RateLimiter(0, 0).take("k"), 0);
});
