// Settings (lib/config.ts): defaults, flags over WHARF_* variables, bad values named in a ConfigError, durations.

import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { loadConfig, parseDurationMs } from "../../lib/config.ts";
import { ConfigError } from "../../lib/errors.ts";

Deno.test("config defaults to 127.0.0.1:8080 and ./data", () => {
  const c = loadConfig([], {});
  assertEquals([c.host, c.port, c.dataDir, c.logLevel], ["127.0.0.1", 8080, "./data", "info"]);
});

Deno.test("config flags win over WHARF_* environment variables", () => {
  const env = { WHARF_HOST: "0.0.0.0", WHARF_PORT: "9000", WHARF_DATA_DIR: "/env", WHARF_LOG_LEVEL: "warn" };
  const fromEnv = loadConfig([], env);
  assertEquals([fromEnv.host, fromEnv.port, fromEnv.dataDir, fromEnv.logLevel], [
    "0.0.0.0",
    9000,
    "/env",
    "warn",
  ]);
  const flags = loadConfig(["--host", "::1", "--port=0", "--data-dir", "/flag", "--log-level", "DEBUG"], env);
  assertEquals([flags.host, flags.port, flags.dataDir, flags.logLevel], ["::1", 0, "/flag", "debug"]);
});

Deno.test("config rejects bad values with a ConfigError naming the setting", () => {
  for (const args of [["--port", "x"], ["--port"], ["--nope"], ["positional"]]) {
    assertThrows(() => loadConfig(args, {}), (e) => e instanceof ConfigError);
  }
  assertThrows(() => loadConfig([], { WHARF_PUBLIC_URL: "ftp://x/y" }), (e) => e instanceof ConfigError);
  assertThrows(() => loadConfig([], { WHARF_TRUST_PROXY: "maybe" }), (e) => e instanceof ConfigError);
});

Deno.test("durations parse Go-like units", () => {
  assertEquals(parseDurationMs("500ms"), 500);
  assertEquals(parseDurationMs("1h30m"), 5_400_000);
  assertEquals(parseDurationMs("250"), 250);
  assertEquals(parseDurationMs("7d"), 604_800_000);
  assertEquals(parseDurationMs("soon"), undefined);
  assertEquals(parseDurationMs(""), undefined);
});
